package shoalpgx

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A pipelined pool whose MinConns fills its Budget (here the whole of it;
// in a Group, the minimums of its tenants' pools together) is granted
// nothing for shared connections: its statements run on its whole
// connection, as without pipelining, instead of waiting for a shared one
// until their contexts end while that connection sits idle.
func TestPipelinedStatementsUseAWholeConnectionWhenTheBudgetGrantsNoShared(t *testing.T) {
	budget, err := shoal.NewBudget(1, shoal.BudgetName("tenants"))
	if err != nil {
		t.Fatal(err)
	}
	p := newTestPool(t, func(c *Config) {
		c.MaxConns, c.MinConns, c.Pipeline, c.Budget = 3, 1, 2, budget
	})
	pgtest.WaitFor(t, 10*time.Second, "MinConns open", func() bool { return p.Stat().IdleConns() == 1 })
	// Well short of pgtest.Ctx's bound: a statement waiting for a
	// shared connection would wait it out.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	if _, err := p.Exec(ctx, "SELECT $1::int", 1); err != nil {
		t.Fatalf("Exec: %v", err)
	}
	var n int
	if err := p.QueryRow(ctx, "SELECT $1::int", 2).Scan(&n); err != nil || n != 2 {
		t.Fatalf("QueryRow: %d, %v", n, err)
	}
	rows, err := p.Query(ctx, "SELECT generate_series(1, $1::int)", 3)
	if err != nil {
		t.Fatalf("Query: %v", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil || len(got) != 3 {
		t.Fatalf("Query's rows: %v, %v", got, err)
	}
	b := &pgx.Batch{}
	b.Queue("SELECT $1::int", 4)
	if err := p.SendBatch(ctx, b).Close(); err != nil {
		t.Fatalf("SendBatch: %v", err)
	}
	if s := p.Stat(); s.TotalConns() != 1 || s.Pipelined().Dials != 0 {
		t.Fatalf("%d connections open, %d shared ones dialled: want the one whole connection the budget holds, no shared one", s.TotalConns(), s.Pipelined().Dials)
	}
}
