package shoalpgx

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A lone caller's statements keep to one shared connection, as the package
// doc says, though two are open and idle between its statements: Exec,
// Query, QueryRow and SendBatch, each sent once the last is answered, all
// run on one backend.
func TestPipelineLoneCallerKeepsToOneConnection(t *testing.T) {
	tr := &pidTracer{}
	p := newPipelinedPool(t, 4, 8, func(c *Config) { c.ConnConfig.Tracer = tr })
	ctx := pgtest.Ctx(t)
	pgtest.WaitFor(t, 5*time.Second, "two shared connections open", func() bool { return len(p.pipe.conns()) == 2 })
	const sql = "select $1::int"
	for i := range 40 {
		var err error
		switch i % 4 {
		case 0:
			err = p.QueryRow(ctx, sql, i).Scan(new(int))
		case 1:
			var rows pgx.Rows
			if rows, err = p.Query(ctx, sql, i); err == nil {
				_, err = pgx.CollectExactlyOneRow(rows, pgx.RowTo[int])
			}
		case 2:
			b := &pgx.Batch{}
			b.Queue(sql, i)
			err = p.SendBatch(ctx, b).Close()
		case 3:
			_, err = p.Exec(ctx, sql, i)
		}
		if err != nil {
			t.Fatalf("statement %d: %v", i, err)
		}
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	pids := map[uint32]int{}
	for _, pid := range append(tr.ends, tr.batchEnds...) {
		pids[pid]++
	}
	if len(pids) != 1 || len(tr.ends)+len(tr.batchEnds) != 40 {
		t.Fatalf("a lone caller's 40 statements ran on backends %v, want one", pids)
	}
	if whole := p.core.Stats().Acquires; whole != 0 {
		t.Fatalf("%d whole connections acquired: the statements were not all pipelined", whole)
	}
}
