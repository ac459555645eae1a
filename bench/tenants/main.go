// Command tenants measures a pool per tenant under one cap, in one
// process, against the real PostgreSQL: -tenants (50) tenants, their
// demand Zipf-skewed (tenant i drawn with weight 1/(i+1)^-s), -workers
// goroutines each running one query after another for a tenant drawn
// anew each time, every query a pg_sleep(-pause) holding its connection.
// Every tenant's backends carry an application_name of its own, and a
// checker counts them at the server every 20ms.
//
// Contenders, one after the other:
//
//   - group: a shoal.Group under a shoal.LocalBudget of -cap (40)
//     connections; each tenant's pool has MaxConns -maxconns and MinConns
//     0, made on first use, closed after 5s idle.
//   - static: a pool per tenant sized by hand from the cap: the cap split
//     by each tenant's expected share of the load, rounded, at least 1 so
//     that every tenant can be served (which takes the total above the cap
//     when there are more tenants than the cap allows for).
//   - uncapped: a pool per tenant of -maxconns, no cap: what the server
//     then holds.
//
// For each, per tenant class (hot: the 5 most drawn; warm: the next 10;
// cold: the rest), queries per second and p50/p99 latency (acquire wait
// included), and the most backends the server held at once.
//
//	go -C bench run ./tenants -dsn "$SHOAL_TEST_POSTGRES"
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgcount"
)

func main() {
	var (
		dsn      = flag.String("dsn", os.Getenv("SHOAL_TEST_POSTGRES"), "PostgreSQL (default $SHOAL_TEST_POSTGRES)")
		tenants  = flag.Int("tenants", 50, "tenants, a pool each")
		capTotal = flag.Int("cap", 40, "connections all tenants may hold together")
		maxConns = flag.Int("maxconns", 16, "each tenant's pool size in group and uncapped")
		workers  = flag.Int("workers", 64, "goroutines running queries")
		zipf     = flag.Float64("s", 1.1, "Zipf exponent of the tenants' demand")
		pause    = flag.Duration("pause", 2*time.Millisecond, "each query's pg_sleep")
		duration = flag.Duration("duration", 10*time.Second, "measured time per contender")
		warmup   = flag.Duration("warmup", 2*time.Second, "unmeasured time before it")
		only     = flag.String("contenders", "group,static,uncapped", "contenders, comma-separated, in order")
		idle     = flag.Duration("idle", 0, "the group's budget: how long a share outlives its demand (shoal.BudgetIdleTime; 0 for its default, 2s)")
	)
	flag.Parse()
	if *dsn == "" {
		log.Fatal("tenants: -dsn (or SHOAL_TEST_POSTGRES) is required")
	}
	if *tenants < 1 || *capTotal < 1 || *maxConns < 1 || *workers < 1 {
		log.Fatal("tenants: -tenants, -cap, -maxconns and -workers must be at least 1")
	}
	w := weights(*tenants, *zipf)
	fmt.Printf("%d tenants (Zipf s=%.2f), %d workers, queries of pg_sleep(%v), cap %d, %v measured after %v\n\n",
		*tenants, *zipf, *workers, *pause, *capTotal, *duration, *warmup)
	fmt.Println("| contender | class | queries/s | p50 | p99 | server backends, most at once | connections opened/s |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|")
	for _, c := range splitComma(*only) {
		r, err := run(c, *dsn, w, *capTotal, *maxConns, *workers, *idle, *pause, *warmup, *duration)
		if err != nil {
			log.Fatalf("tenants: %s: %v", c, err)
		}
		for _, cl := range classes(*tenants) {
			lat := r.latencies(cl.from, cl.to)
			qps := float64(len(lat)) / duration.Seconds()
			fmt.Printf("| %s | %s | %.0f | %v | %v | %d | %.0f |\n", c, cl.name, qps, pct(lat, 0.50), pct(lat, 0.99), r.maxBackends, r.dialsPerSec)
		}
	}
}

// weights returns tenant i's share of the load, 1/(i+1)^s normalised.
func weights(n int, s float64) []float64 {
	w := make([]float64, n)
	total := 0.0
	for i := range w {
		w[i] = 1 / math.Pow(float64(i+1), s)
		total += w[i]
	}
	for i := range w {
		w[i] /= total
	}
	return w
}

type class struct {
	name     string
	from, to int // tenants [from, to)
}

func classes(n int) []class {
	return []class{{"hot (1-5)", 0, min(5, n)}, {"warm (6-15)", min(5, n), min(15, n)}, {fmt.Sprintf("cold (16-%d)", n), min(15, n), n}}
}

// result is one contender's run: each tenant's latencies, measured.
type result struct {
	lat         [][]time.Duration
	maxBackends int
	dialsPerSec float64 // connections opened per second, measured
}

func (r *result) latencies(from, to int) []time.Duration {
	var all []time.Duration
	for _, l := range r.lat[from:to] {
		all = append(all, l...)
	}
	slices.Sort(all)
	return all
}

func pct(sorted []time.Duration, q float64) string {
	if len(sorted) == 0 {
		return "–"
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))].Round(10 * time.Microsecond).String()
}

// do runs one query for tenant i; the contenders differ in how.
type doer interface {
	do(ctx context.Context, tenant int, q func(*pgx.Conn) error) error
	close()
}

func run(contender, dsn string, w []float64, capTotal, maxConns, workers int, idle, pause, warmup, duration time.Duration) (*result, error) {
	app := fmt.Sprintf("shoal-bench-tenants-%d-", time.Now().UnixNano()%1_000_000)
	var dials atomic.Int64
	mk := func(i, maxConns int) (shoal.Config[*pgx.Conn], error) {
		pc, err := pgx.ParseConfig(dsn)
		if err != nil {
			return shoal.Config[*pgx.Conn]{}, err
		}
		pc.RuntimeParams["application_name"] = fmt.Sprintf("%s%02d", app, i)
		return shoal.Config[*pgx.Conn]{
			Name:     fmt.Sprintf("tenant-%02d", i),
			MaxConns: maxConns,
			Dial: func(ctx context.Context) (*pgx.Conn, error) {
				dials.Add(1)
				return pgx.ConnectConfig(ctx, pc)
			},
			Close: closeConn,
		}, nil
	}
	var d doer
	switch contender {
	case "group":
		var opts []shoal.BudgetOption
		if idle > 0 {
			opts = append(opts, shoal.BudgetIdleTime(idle))
		}
		b, err := shoal.NewBudget(capTotal, append(opts, shoal.BudgetName("tenants"))...)
		if err != nil {
			return nil, err
		}
		g, err := shoal.NewGroup(shoal.GroupConfig[int, *pgx.Conn]{
			Name: "tenants", Budget: b, IdleTimeout: 5 * time.Second,
			Config: func(i int) (shoal.Config[*pgx.Conn], error) { return mk(i, maxConns) },
		})
		if err != nil {
			return nil, err
		}
		d = groupDoer{g}
	case "static", "uncapped":
		pools := make([]*shoal.Pool[*pgx.Conn], len(w))
		for i := range pools {
			size := maxConns
			if contender == "static" {
				size = max(1, int(math.Round(w[i]*float64(capTotal))))
			}
			cfg, err := mk(i, size)
			if err != nil {
				return nil, err
			}
			if pools[i], err = shoal.New(cfg); err != nil {
				return nil, err
			}
		}
		d = poolsDoer(pools)
	default:
		return nil, fmt.Errorf("unknown contender %q (group, static, uncapped)", contender)
	}
	defer d.close()

	ctx, cancel := context.WithTimeout(context.Background(), warmup+duration+time.Minute)
	defer cancel()
	checker, err := pgcount.Start(ctx, pgcount.Config{
		ConnString: dsn,
		Query:      "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE $1",
		Arg:        app + "%",
	})
	if err != nil {
		return nil, err
	}
	cum := make([]float64, len(w))
	acc := 0.0
	for i, x := range w {
		acc += x
		cum[i] = acc
	}
	sql := fmt.Sprintf("SELECT pg_sleep(%f)", pause.Seconds())
	r := &result{lat: make([][]time.Duration, len(w))}
	var mu sync.Mutex
	start := time.Now()
	measureFrom, end := start.Add(warmup), start.Add(warmup+duration)
	var dialsFrom int64
	time.AfterFunc(warmup, func() { atomic.StoreInt64(&dialsFrom, dials.Load()) })
	var wg sync.WaitGroup
	var firstErr error
	for g := range workers {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(g), 11))
			mine := make([][]time.Duration, len(w))
			for {
				t0 := time.Now()
				if !t0.Before(end) {
					break
				}
				i, _ := slices.BinarySearch(cum, rnd.Float64())
				i = min(i, len(w)-1)
				qctx, qcancel := context.WithTimeout(ctx, 30*time.Second)
				err := d.do(qctx, i, func(c *pgx.Conn) error { _, err := c.Exec(qctx, sql); return err })
				qcancel()
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				if t0.After(measureFrom) {
					mine[i] = append(mine[i], time.Since(t0))
				}
			}
			mu.Lock()
			for i := range mine {
				r.lat[i] = append(r.lat[i], mine[i]...)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	rep := checker.Stop()
	r.maxBackends = rep.Max
	r.dialsPerSec = float64(dials.Load()-atomic.LoadInt64(&dialsFrom)) / duration.Seconds()
	return r, firstErr
}

type groupDoer struct{ g *shoal.Group[int, *pgx.Conn] }

func (d groupDoer) do(ctx context.Context, i int, q func(*pgx.Conn) error) error {
	return d.g.Do(ctx, i, q)
}
func (d groupDoer) close() { _ = d.g.Close(context.Background()) }

type poolsDoer []*shoal.Pool[*pgx.Conn]

func (d poolsDoer) do(ctx context.Context, i int, q func(*pgx.Conn) error) error {
	return d[i].Do(ctx, q)
}
func (d poolsDoer) close() {
	for _, p := range d {
		_ = p.Close(context.Background())
	}
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
