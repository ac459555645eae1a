//go:build unix

package clustertest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgcount"
	"github.com/shoalpool/shoal/shoaletcd"
	"github.com/shoalpool/shoal/shoalpgx"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A pipelining pool on a shoaletcd budget, in this process, on the shared
// etcd: its whole and its shared connections join the budget as two pools
// of one member, each dial takes a permit of the budget and one of the
// pool's division of MaxConns (shoalpgx's twoBudgets), and MaxConns is
// twice the budget's size, so the budget is what binds; connections live
// 100-150ms, so permits go back and are taken again throughout. Pipelined
// statements and transactions run together, each answered with its own
// value; the server never holds more of the pool's connections than the
// budget's size, counted every 5ms until the pool has closed; both kinds
// were used; and once the pool has closed the budget has every permit
// back and no pool left.
func TestPipelinedPoolOnAnEtcdBudget(t *testing.T) {
	t.Parallel()
	const (
		budgetSize = 4
		maxConns   = 2 * budgetSize
		depth      = 4 // Pipeline
		statements = 12
		txs        = 3
		rounds     = 40
	)
	pg := postgres(t)
	endpoint := sharedEtcd(t)
	name := uniqueName(t)
	prefix := "/shoal-clustertest/" + name + "/"
	client := etcdClient(t, []string{endpoint})
	t.Cleanup(func() {
		// The size key has no lease: deleted, as newCluster's are.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if _, err := client.Delete(ctx, prefix, clientv3.WithPrefix()); err != nil {
			t.Logf("deleting %s: %v", prefix, err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	budget, err := shoaletcd.New(ctx, client, shoaletcd.Options{Name: name, Prefix: prefix, Size: budgetSize})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := budget.Close(); err != nil {
			t.Errorf("closing the budget: %v", err)
		}
	}()
	server, err := pgcount.Start(ctx, pgcount.Config{ConnString: pg, Arg: name, Limit: budgetSize, Interval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	stopServer := func() pgcount.Report {
		stopped = true
		return server.Stop()
	}
	defer func() {
		if !stopped {
			server.Stop()
		}
	}()

	cfg, err := shoalpgx.ParseConfig(pg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Name = name
	cfg.ConnConfig.RuntimeParams["application_name"] = name
	cfg.MaxConns = maxConns
	cfg.Pipeline = depth
	cfg.Budget = budget
	// Connections end throughout, so that permits go back and are taken
	// again while the callers run.
	cfg.MaxConnLifetime = 100 * time.Millisecond
	cfg.MaxConnLifetimeJitter = 50 * time.Millisecond
	pool, err := shoalpgx.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	poolClosed := false
	defer func() {
		if !poolClosed {
			pool.Close()
		}
	}()
	if got := len(budget.Status().Pools); got != 2 {
		t.Fatalf("the budget has %d pools, want 2: the whole connections' and the shared ones'", got)
	}

	var wg sync.WaitGroup
	var stmtOK, txOK atomic.Int64
	for w := range statements {
		wg.Go(func() {
			for i := range rounds {
				want := w*1000 + i
				var got int
				// QueryRow and a batch, both pipelined.
				err := pool.QueryRow(ctx, "SELECT $1::int FROM pg_sleep(0.002)", want).Scan(&got)
				if err != nil || got != want {
					t.Errorf("pipelined QueryRow %d: got %d, %v", want, got, err)
					return
				}
				if i%4 == 0 {
					b := &pgx.Batch{}
					b.Queue("SELECT $1::int", want)
					b.Queue("SELECT $1::int + 1", want)
					var a, c int
					br := pool.SendBatch(ctx, b)
					errA := br.QueryRow().Scan(&a)
					errC := br.QueryRow().Scan(&c)
					if err := br.Close(); errA != nil || errC != nil || err != nil || a != want || c != want+1 {
						t.Errorf("pipelined batch %d: got %d and %d, %v, %v, %v", want, a, c, errA, errC, err)
						return
					}
				}
				stmtOK.Add(1)
			}
		})
	}
	for w := range txs {
		wg.Go(func() {
			for i := range rounds / 4 {
				want := -(w*1000 + i)
				var got int
				err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, "SELECT pg_sleep(0.002)"); err != nil {
						return err
					}
					return tx.QueryRow(ctx, "SELECT $1::int", want).Scan(&got)
				})
				if err != nil || got != want {
					t.Errorf("transaction %d: got %d, %v", want, got, err)
					return
				}
				txOK.Add(1)
			}
		})
	}
	wg.Wait()
	st := pool.Stat()
	pipelinedAcquires, closed := st.Pipelined().Acquires, st.Shoal().Closed
	pool.Close()
	poolClosed = true
	r := stopServer()

	if stmtOK.Load() != statements*rounds || txOK.Load() != txs*(rounds/4) {
		t.Fatalf("answered %d of %d statements and %d of %d transactions", stmtOK.Load(), statements*rounds, txOK.Load(), txs*(rounds/4))
	}
	if pipelinedAcquires == 0 {
		t.Fatal("no statement was pipelined")
	}
	t.Logf("server: %d samples, at most %d connections under a budget of %d; %d pipelined statements, %d connections closed while running", len(r.Samples), r.Max, budgetSize, pipelinedAcquires, closed)
	if r.Errors > 0 {
		t.Errorf("%d samples failed, the last with %v", r.Errors, r.LastErr)
	}
	if len(r.Over) > 0 {
		var at []string
		for _, s := range r.Over[:min(len(r.Over), 10)] {
			at = append(at, fmt.Sprintf("%d at %s", s.Count, s.At.Format("15:04:05.000")))
		}
		t.Errorf("the server held more than the budget's %d connections of the pool: %v", budgetSize, at)
	}
	if r.Max == 0 {
		t.Error("the server never held a connection of the pool: the count looked at the wrong name")
	}
	// Every permit back, and both pools gone from the budget, before
	// the budget closes.
	if s := budget.Status(); s.InUse != 0 || len(s.Pools) != 0 {
		t.Errorf("after the pool's Close the budget has %d permits out and %d pools", s.InUse, len(s.Pools))
	}
}
