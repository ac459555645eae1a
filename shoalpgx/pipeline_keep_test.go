package shoalpgx

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A pipelined pool whose load falls keeps its shared connections open
// while no statement needs a whole connection: the division of MaxConns
// between the two kinds keeps what a kind holds once its demand has
// fallen, rather than close half of them and dial them again at the next
// burst. A transaction that then needs a whole connection gets one, and
// the server never sees more than MaxConns.
func TestPipelineKeepsItsSharedConnectionsWhenLoadFalls(t *testing.T) {
	ctx := pgtest.Ctx(t)
	name := pgtest.AppName(t)
	p := newPipelinedPool(t, 4, 4, func(c *Config) {
		c.ConnConfig.RuntimeParams["application_name"] = name
	})
	div, ok := p.division.(*shoal.LocalBudget)
	if !ok {
		t.Fatalf("the division is a %T, want a *shoal.LocalBudget", p.division)
	}
	shared := func() int { return p.pipe.core.Stats().TotalConns }

	// Statements slow enough that none fills another's connection, until
	// the shared pool has all four.
	grow, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for shared() < 4 && grow.Err() == nil {
				if _, err := p.Exec(grow, "SELECT pg_sleep(0.02)"); err != nil && grow.Err() == nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := shared(); n != 4 {
		t.Fatalf("%d shared connections open after the burst, want 4", n)
	}

	// The division sees the shared pool's demand fall once it has stayed
	// low for the budget's IdleTime (2s), and in that same division sets
	// its share: all four it holds, nobody else asking.
	member := func() shoal.BudgetMemberStats {
		for _, m := range div.Stats().Members {
			if m.Name == p.pipe.core.Stats().Name {
				return m
			}
		}
		t.Fatal("the shared pool is not a member of the division")
		return shoal.BudgetMemberStats{}
	}
	for deadline := time.Now().Add(10 * time.Second); member().Demand > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("the division still counts a demand of %d for the shared pool after 10s idle", member().Demand)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if m := member(); m.Share != 4 {
		t.Fatalf("the shared pool's share is %d once its demand fell, want the 4 it holds (division: %+v)", m.Share, div.Stats().Members)
	}
	if n := shared(); n != 4 {
		t.Fatalf("%d shared connections open once the load fell, want the 4 kept (division: %+v)", n, div.Stats().Members)
	}
	if n := serverConns(t, name); n != 4 {
		t.Fatalf("%d connections at the server once the load fell, want the 4 kept", n)
	}

	// A transaction takes one of them, closed and dialled as a whole
	// connection.
	err := pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "SELECT 1")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := serverConns(t, name); n > 4 {
		t.Fatalf("%d connections at the server after the transaction, over MaxConns 4", n)
	}
	if n := shared(); n != 3 {
		t.Fatalf("%d shared connections after the transaction, want 3: one given up to it", n)
	}
}

// serverConns counts the connections at the server whose application_name
// is name.
func serverConns(t *testing.T, name string) int {
	t.Helper()
	var n int
	err := pgtest.AdminConn(t).QueryRow(pgtest.Ctx(t), "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", name).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
