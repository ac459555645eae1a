package shoalpgx

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// countingObserver counts the acquires and releases an Observer hears of.
type countingObserver struct {
	shoal.BaseObserver
	acquires, releases atomic.Int64
}

func (o *countingObserver) ObserveAcquire(time.Duration) { o.acquires.Add(1) }
func (o *countingObserver) ObserveRelease(time.Duration) { o.releases.Add(1) }

// In CacheDescribe and DescribeExec a statement with an argument whose Go
// type does not say its parameter's type runs on a whole connection: the
// Observer hears of one acquire and one release for it, as without
// pipelining, not of a shared connection's too.
func TestPipelineObserveDescribedStatementOnce(t *testing.T) {
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheDescribe, pgx.QueryExecModeDescribeExec} {
		o := &countingObserver{}
		p := newPipelinedPool(t, 4, 8, func(c *Config) {
			c.Observer = o
			c.ConnConfig.DefaultQueryExecMode = mode
		})
		ctx := pgtest.Ctx(t)
		// A shared connection open, its types known.
		if _, err := p.Exec(ctx, "select $1::int", 1); err != nil {
			t.Fatal(err)
		}
		arg := map[string]any{"a": 1}
		before := o.acquires.Load()
		if _, err := p.Exec(ctx, "select $1::jsonb", arg); err != nil {
			t.Fatal(err)
		}
		var s string
		if err := p.QueryRow(ctx, "select $1::jsonb::text", arg).Scan(&s); err != nil {
			t.Fatal(err)
		}
		b := &pgx.Batch{}
		b.Queue("select $1::int", 1)
		b.Queue("select $1::jsonb", arg)
		if err := p.SendBatch(ctx, b).Close(); err != nil {
			t.Fatal(err)
		}
		if got := o.acquires.Load() - before; got != 3 {
			t.Errorf("%v: %d acquires for 3 statements", mode, got)
		}
		pgtest.WaitFor(t, 5*time.Second, "every lease ended", func() bool { return o.acquires.Load() == o.releases.Load() })
	}
}
