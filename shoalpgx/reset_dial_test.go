package shoalpgx

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// resetOnDial is an Observer that, once armed, resets its pool when a dial
// succeeds: after the connection is made and before the core takes it in,
// where a Reset's sweep cannot reach it, as for a dial under way at a
// Reset. It notes that dial's backend (connected, AfterConnect's).
type resetOnDial struct {
	shoal.BaseObserver
	armed     atomic.Bool
	pool      atomic.Pointer[Pool]
	connected atomic.Uint32 // the backend of the latest connection made
	before    atomic.Uint32 // the backend of the one made before the Reset
}

func (o *resetOnDial) ObserveDial(_ time.Duration, err error) {
	if err == nil && o.armed.CompareAndSwap(true, false) {
		o.before.Store(o.connected.Load())
		o.pool.Load().Reset()
	}
}

// A connection dialled before a Reset and taken in after it (its dial was
// under way) is not handed out: it may be to the old primary, and its
// refusal would not reset the pool again. The statement goes to a
// connection dialled after the Reset, whole or shared.
func TestResetDuringADialIsNotOutlived(t *testing.T) {
	for _, pipeline := range []int{0, 4} {
		t.Run(fmt.Sprintf("pipeline=%d", pipeline), func(t *testing.T) {
			obs := &resetOnDial{}
			p := newTestPool(t, func(c *Config) {
				// With Pipeline, MaxConns 2 keeps one shared connection,
				// so that its dials come one at a time.
				c.MaxConns, c.Pipeline = 2, pipeline
				c.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
					obs.connected.Store(conn.PgConn().PID())
					return nil
				}
				if pipeline > 0 {
					c.PipelineObserver = obs
				} else {
					c.Observer = obs
				}
			})
			obs.pool.Store(p)
			ctx := pgtest.Ctx(t)
			obs.armed.Store(true)
			if pipeline > 0 {
				// The shared connection kept open is dialled again.
				p.Reset()
				pgtest.WaitFor(t, 10*time.Second, "the shared connection dialled again", func() bool { return !obs.armed.Load() })
			}
			var pid uint32
			if err := p.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
				t.Fatal(err)
			}
			before := obs.before.Load()
			if before == 0 {
				t.Fatal("no dial came after the observer was armed")
			}
			if pid == before {
				t.Fatalf("the statement ran on backend %d, dialled before the Reset", pid)
			}
		})
	}
}
