// Command shoalload runs shoal pools under a steady load and exports their
// metrics with shoalprom, for the alerting rules' and the dashboard's test
// against a real Prometheus (internal/promtest). It runs until it is
// killed or its standard input closes.
//
// Its pools: "orders", a core pool of TCP connections to -server (a
// loopback echo server); "reports" and "batch", two more on the same
// server that share one shoal.NewBudget; and, with -pg,
// "accounts", a shoalpgx pool that commits a transaction and reads through
// its read pool (Reads) every 50ms, its hosts exported too. On a
// primary/standby pair the read pool reads from the standby, and so reads
// its lag. -fault picks what goes wrong:
//
//	none        nothing: the healthy run
//	exhaust     orders: 8 callers on 2 connections, each held 400ms, acquires of 1s
//	leak        orders: one lease taken after the first scrape and never released (LeakThreshold 1s)
//	serverdown  nothing here: the test stops -server, and every connection breaks
//	starve      reports and batch: 4 callers each under a budget of 2, a share of 1 each
//
// A pool whose hosts are all down (the test passes such a -pg) is the
// fault for ShoalNoPrimary, and a standby whose replay the test pauses the
// one for ShoalHostLagHigh. It prints "metrics http://ADDR/metrics" once
// it serves.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalpgx"
	"github.com/shoalpool/shoal/shoalprom"
)

func main() {
	listen := flag.String("metrics", "127.0.0.1:0", "address to serve /metrics on")
	server := flag.String("server", "", "address of the echo server the pools dial (required)")
	pg := flag.String("pg", "", "connection string of the shoalpgx pool; empty for none")
	fault := flag.String("fault", "none", "none, exhaust, leak, serverdown or starve")
	flag.Parse()
	if *server == "" {
		log.Fatal("shoalload: -server is required")
	}
	switch *fault {
	case "none", "exhaust", "leak", "serverdown", "starve":
	default:
		log.Fatalf("shoalload: unknown -fault %q", *fault)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // the test ends the program by closing stdin, or by killing it
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()

	metrics, err := shoalprom.New(shoalprom.Options{})
	if err != nil {
		log.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics)

	var wg sync.WaitGroup
	orders := corePool(metrics, "orders", *server, ordersConfig(*fault))
	defer closeSoon(orders)
	budget, err := shoal.NewBudget(budgetSize(*fault), shoal.BudgetName("reporting"))
	if err != nil {
		log.Fatal(err)
	}
	reports := corePool(metrics, "reports", *server, shoal.Config[net.Conn]{MaxConns: 4, Budget: budget})
	defer closeSoon(reports)
	batch := corePool(metrics, "batch", *server, shoal.Config[net.Conn]{MaxConns: 4, Budget: budget})
	defer closeSoon(batch)
	ordersLoad, budgetedLoad := loadOf(*fault)
	run(ctx, &wg, orders, ordersLoad)
	run(ctx, &wg, reports, budgetedLoad)
	run(ctx, &wg, batch, budgetedLoad)
	// The leak starts after the first scrape, so that Prometheus sees the
	// leak counter at 0 before it counts: increase() needs both samples.
	scraped := make(chan struct{})
	var scrapedOnce sync.Once
	if *fault == "leak" {
		go func() {
			select {
			case <-scraped:
			case <-ctx.Done():
				return
			}
			if _, err := orders.Acquire(ctx); err != nil && ctx.Err() == nil { // kept: the leak
				log.Fatal(err)
			}
		}()
	}
	if *pg != "" {
		accounts := pgPool(ctx, metrics, *pg)
		defer accounts.Close()
		wg.Add(1)
		go func() { defer wg.Done(); queryLoop(ctx, accounts) }()
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	serve := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serve.ServeHTTP(w, r)
		scrapedOnce.Do(func() { close(scraped) })
	})
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	fmt.Printf("metrics http://%s/metrics\n", ln.Addr())
	<-ctx.Done()
	srv.Close()
	wg.Wait()
}

// load is how a pool is used: callers, how long each holds a connection,
// how long it waits for one at most, and how long it pauses between.
type load struct {
	callers           int
	hold, wait, pause time.Duration
}

// loadOf returns the load of orders, and that of each of the two pools
// under the budget (reports and batch).
func loadOf(fault string) (orders, budgeted load) {
	orders = load{callers: 2, hold: 5 * time.Millisecond, wait: 2 * time.Second, pause: 20 * time.Millisecond}
	budgeted = orders
	switch fault {
	case "exhaust":
		orders = load{callers: 8, hold: 400 * time.Millisecond, wait: time.Second, pause: 0}
	case "serverdown":
		orders.wait, budgeted.wait = 300*time.Millisecond, 300*time.Millisecond
	case "starve":
		budgeted = load{callers: 4, hold: 100 * time.Millisecond, wait: 2 * time.Second, pause: 0}
	}
	return orders, budgeted
}

func ordersConfig(fault string) shoal.Config[net.Conn] {
	cfg := shoal.Config[net.Conn]{MaxConns: 4, LeakThreshold: time.Second}
	if fault == "exhaust" {
		cfg.MaxConns = 2
	}
	return cfg
}

// budgetSize is the size of the budget reports and batch share: room for
// both pools' MaxConns, but 2 in the starve fault, where each pool's 4
// callers want 4 connections and the budget divides 1 to each.
func budgetSize(fault string) int {
	if fault == "starve" {
		return 2
	}
	return 8
}

// corePool makes a pool of TCP connections to addr, observed by metrics
// under name.
func corePool(metrics *shoalprom.Collector, name, addr string, cfg shoal.Config[net.Conn]) *shoal.Pool[net.Conn] {
	m, err := metrics.Pool(name)
	if err != nil {
		log.Fatal(err)
	}
	var d net.Dialer
	cfg.Name = name
	cfg.Observer = m
	cfg.Dial = func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	cfg.Close = func(c net.Conn) error { return c.Close() }
	p, err := shoal.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	return p
}

// closeSoon closes p, giving up after a second on the leases still held
// (the leaked one never comes back).
func closeSoon(p *shoal.Pool[net.Conn]) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	p.Close(ctx)
}

// run starts l's callers on p: each acquires, sends a byte through the
// echo server and reads it back, holds the connection, releases it (or
// discards it when the exchange failed) and pauses.
func run(ctx context.Context, wg *sync.WaitGroup, p *shoal.Pool[net.Conn], l load) {
	for range l.callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1)
			for ctx.Err() == nil {
				actx, cancel := context.WithTimeout(ctx, l.wait)
				lease, err := p.Acquire(actx)
				cancel()
				if err != nil {
					sleep(ctx, 10*time.Millisecond)
					continue
				}
				c := lease.Value()
				c.SetDeadline(time.Now().Add(time.Second))
				if _, err := c.Write([]byte{'x'}); err != nil {
					lease.Discard()
					continue
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					lease.Discard()
					continue
				}
				sleep(ctx, l.hold)
				lease.Release()
				sleep(ctx, l.pause)
			}
		}()
	}
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// pgPool makes the shoalpgx pool "accounts" on connString, its hosts
// exported per host.
func pgPool(ctx context.Context, metrics *shoalprom.Collector, connString string) *shoalpgx.Pool {
	m, err := metrics.Pool("accounts")
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := shoalpgx.ParseConfig(connString)
	if err != nil {
		log.Fatal(err)
	}
	// The read pool is a pool of its own, with its own hosts (its
	// connections to the standby): exported under its own name.
	mr, err := metrics.Pool("accounts/reads")
	if err != nil {
		log.Fatal(err)
	}
	cfg.MaxConns = 2
	cfg.Observer = m
	cfg.ReadObserver = mr
	pool, err := shoalpgx.NewWithConfig(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	m.AttachHosts(pool.Hosts)
	mr.AttachHosts(pool.Reads().Hosts)
	return pool
}

// queryLoop, every 50ms, commits a transaction through pool and reads
// through its read pool. The transaction is given an id
// (pg_current_xact_id), so its commit is written and replicated with its
// time: what a standby's replay lag is measured against. The read keeps
// the read pool's connections in use, and so its look at their host's
// role and lag once per RoleCheckPeriod.
func queryLoop(ctx context.Context, pool *shoalpgx.Pool) {
	reads := pool.Reads()
	for ctx.Err() == nil {
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		_, werr := pool.Exec(qctx, "SELECT pg_current_xact_id()")
		rerr := reads.AcquireFunc(qctx, func(c *shoalpgx.Conn) error {
			var one int
			return c.QueryRow(qctx, "SELECT 1").Scan(&one)
		})
		cancel()
		if err := errors.Join(werr, rerr); err != nil && !errors.Is(err, context.Canceled) {
			sleep(ctx, 100*time.Millisecond)
		}
		sleep(ctx, 50*time.Millisecond)
	}
}
