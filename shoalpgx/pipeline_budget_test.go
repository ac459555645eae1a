package shoalpgx

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A pipelined pool under a Budget it shares with another pool: its whole
// and shared connections join the budget as two members, and at the
// server the two pools together never hold more than the budget's size,
// nor the pipelined one more than its MaxConns, polled throughout, while
// both kinds and the other pool are all served.
func TestPipelineWithBudget(t *testing.T) {
	ctx := pgtest.Ctx(t)
	b, err := shoal.NewBudget(5, shoal.BudgetName("shared"))
	if err != nil {
		t.Fatal(err)
	}
	name := pgtest.AppName(t)
	// The other pool first: cleanups run last first, and each looks for
	// goroutines left since its pool was made.
	plain := newTestPool(t, func(c *Config) {
		c.Budget = b
		c.MaxConns = 4
		c.ConnConfig.RuntimeParams["application_name"] = name + "-plain"
	})
	piped := newPipelinedPool(t, 3, 4, func(c *Config) {
		c.Budget = b
		c.ConnConfig.RuntimeParams["application_name"] = name + "-piped"
	})
	want := 3 // with SHOAL_TEST_PIPELINE the other pool pipelines too: 4
	if plain.pipe != nil {
		want++
	}
	if n := len(b.Stats().Members); n != want {
		t.Fatalf("the budget has %d members, want %d: each kind of each pool", n, want)
	}
	var names []string
	for _, m := range b.Stats().Members {
		names = append(names, m.Name)
	}
	pipedName := piped.Stat().Shoal().Name
	if !slices.Contains(names, pipedName) || !slices.Contains(names, pipedName+"/pipelined") {
		t.Fatalf("the budget's members %q, want the pipelined pool's two kinds as %q and %q", names, pipedName, pipedName+"/pipelined")
	}
	admin := pgtest.AdminConn(t)
	var most, mostPiped atomic.Int32
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			var all, piped int32
			err := admin.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE application_name = $2)
				FROM pg_stat_activity WHERE application_name IN ($1, $2)`, name+"-plain", name+"-piped").Scan(&all, &piped)
			if err != nil {
				t.Error(err)
				return
			}
			if all > most.Load() {
				most.Store(all)
			}
			if piped > mostPiped.Load() {
				mostPiped.Store(piped)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	var wg sync.WaitGroup
	var pipedOK, txOK, plainOK atomic.Int32
	for range 12 {
		wg.Go(func() {
			for range 30 {
				if err := piped.QueryRow(ctx, "SELECT 1 FROM pg_sleep(0.002)").Scan(new(int)); err != nil {
					t.Errorf("a pipelined query: %v", err)
					return
				}
				pipedOK.Add(1)
			}
		})
	}
	for range 3 {
		wg.Go(func() {
			for range 10 {
				err := pgx.BeginFunc(ctx, piped, func(tx pgx.Tx) error {
					_, err := tx.Exec(ctx, "SELECT pg_sleep(0.002)")
					return err
				})
				if err != nil {
					t.Errorf("a transaction: %v", err)
					return
				}
				txOK.Add(1)
			}
		})
		wg.Go(func() {
			for range 10 {
				if _, err := plain.Exec(ctx, "SELECT pg_sleep(0.002)"); err != nil {
					t.Errorf("the other pool: %v", err)
					return
				}
				plainOK.Add(1)
			}
		})
	}
	wg.Wait()
	close(stop)
	sampler.Wait()
	// Closed before the pipelined pool's cleanup looks for goroutines
	// left: the other pool's, pipelined too with SHOAL_TEST_PIPELINE,
	// opened during the test.
	plain.Close()
	if pipedOK.Load() != 12*30 || txOK.Load() != 30 || plainOK.Load() != 30 {
		t.Fatalf("served %d pipelined queries, %d transactions, %d of the other pool's statements", pipedOK.Load(), txOK.Load(), plainOK.Load())
	}
	if len(piped.pipe.conns()) == 0 {
		t.Fatal("the pipelined pool's queries were not pipelined")
	}
	if m := most.Load(); m > 5 || m == 0 {
		t.Fatalf("at most %d connections of the two pools seen at the server under a budget of 5", m)
	}
	if m := mostPiped.Load(); m > 3 {
		t.Fatalf("at most %d connections of the pipelined pool seen at the server, over its MaxConns of 3", m)
	}
	t.Logf("most connections seen: %d together, %d of the pipelined pool", most.Load(), mostPiped.Load())
}

// askingBudget is a user's Budget that counts the asks for a division it
// is passed (shoal.BudgetAsker).
type askingBudget struct {
	shoal.Budget
	asks atomic.Int32
}

func (b *askingBudget) AskShare() { b.asks.Add(1) }

// A core pool's ask for a division, made when its share holds back a dial,
// reaches the user's budget through the pair of budgets a pipelined pool's
// core pools join, so that the user's budget moves idle connections to it
// at once, as the division does.
func TestPipelineBudgetsPassAsksOn(t *testing.T) {
	div, err := shoal.NewBudget(4)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := shoal.NewBudget(4)
	if err != nil {
		t.Fatal(err)
	}
	user := &askingBudget{Budget: inner}
	var b shoal.Budget = &twoBudgets{division: div, user: user, members: map[shoal.BudgetMember]*twoShares{}}
	asker, ok := b.(shoal.BudgetAsker)
	if !ok {
		t.Fatal("the pair of budgets takes no ask: a core pool's asks would stop there")
	}
	asker.AskShare()
	if n := user.asks.Load(); n != 1 {
		t.Fatalf("the user's budget was asked %d times, want 1", n)
	}
}
