package integration_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/jackc/pgx/v5"
	"github.com/rs/zerolog"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/shoalpgx"
)

// load runs workers goroutines, each doing queries one after another until
// stop is closed or it has done maxOps, every query bounded by opTimeout. It
// counts successes and failures and keeps the failures' errors.
type load struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	errs       []error
	wg         sync.WaitGroup
	stop       chan struct{}
}

func startLoad(p *shoalpgx.Pool, workers, maxOps int, opTimeout time.Duration) *load {
	l := &load{stop: make(chan struct{})}
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; i < maxOps; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
				var v int
				err := p.QueryRow(ctx, "select $1::int", w*maxOps+i).Scan(&v)
				cancel()
				if err != nil {
					l.failed.Add(1)
					l.mu.Lock()
					l.errs = append(l.errs, err)
					l.mu.Unlock()
				} else {
					l.ok.Add(1)
				}
			}
		}()
	}
	return l
}

// finish stops the load and waits for its goroutines, failing if they do not
// end: every operation has a deadline, so one that hangs is a bug.
func (l *load) finish(t *testing.T) {
	t.Helper()
	close(l.stop)
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("load goroutines did not end within 30s: an operation hung past its deadline")
	}
}

func (l *load) errors() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// TestTerminateEveryBackendUnderLoad kills every backend of a busy pool,
// twice, with pg_terminate_backend. Each killed connection may fail the one
// query that was on it (or that found it dead first); the pool replaces them,
// no acquire hangs, and later queries all succeed.
func TestTerminateEveryBackendUnderLoad(t *testing.T) {
	const maxConns, workers = 8, 24
	p := pgtest.NewPool(t, shoalpgx.ParseConfig, shoalpgx.NewWithConfig, func(c *shoalpgx.Config) { c.MaxConns = maxConns })
	admin := pgtest.AdminConn(t)
	ctx := pgtest.Ctx(t)
	app := pgtest.AppName(t)

	l := startLoad(p, workers, 100000, 5*time.Second)
	killed := 0
	for round := range 2 {
		target := l.ok.Load() + 500
		pgtest.WaitFor(t, 20*time.Second, "500 queries before the kill", func() bool { return l.ok.Load() >= target })
		var n int
		err := admin.QueryRow(ctx, `select count(*) from (
			select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1) k`, app).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("round %d: no backend of the pool found to kill", round)
		}
		killed += n
	}
	// After the kills, the pool must serve again: wait for plenty of
	// successes, then stop.
	target := l.ok.Load() + 2000
	pgtest.WaitFor(t, 30*time.Second, "2000 queries after the kills", func() bool { return l.ok.Load() >= target })
	l.finish(t)

	errs := l.errors()
	t.Logf("killed %d backends; %d queries ok, %d failed", killed, l.ok.Load(), len(errs))
	if len(errs) > killed {
		t.Errorf("%d queries failed for %d killed backends: more than one per killed connection", len(errs), killed)
	}
	for _, err := range errs {
		if errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a query waited until its deadline (a hang): %v", err)
		}
	}

	// Later queries succeed, in parallel, with no error at all.
	l2 := startLoad(p, workers, 50, 5*time.Second)
	l2.wg.Wait()
	if n := l2.failed.Load(); n != 0 {
		t.Fatalf("%d of %d queries after the recovery failed, first: %v", n, n+l2.ok.Load(), l2.errors()[0])
	}
	if s := p.Stat().Shoal(); s.TotalConns > maxConns {
		t.Fatalf("%d connections open, more than MaxConns %d", s.TotalConns, maxConns)
	}
}

// TestServerDownAndUp puts a TCP proxy between the pool and the server,
// switches it off under load and on again. While it is off, queries fail with
// an error that says the dial failed, within their deadline; the pool dials
// with backoff instead of storming; when it is back the pool returns to full
// strength with about MaxConns dials.
func TestServerDownAndUp(t *testing.T) {
	const maxConns, workers = 8, 24
	cfg := pgtest.Config(t, shoalpgx.ParseConfig, nil)
	proxy := startProxy(t, net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))))
	host, port, _ := net.SplitHostPort(proxy.Addr())
	portNum, _ := strconv.Atoi(port)
	cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(portNum)
	cfg.ConnConfig.Fallbacks = nil
	cfg.MaxConns = maxConns
	var dials atomic.Int64
	cfg.BeforeConnect = func(context.Context, *pgx.ConnConfig) error { dials.Add(1); return nil }
	p := pgtest.Open(t, shoalpgx.NewWithConfig, cfg)
	t.Cleanup(proxy.Stop) // runs before the pool's cleanup and its goroutine check

	full := func() bool { return p.Stat().Shoal().TotalConns == maxConns }
	// Each query has 2s. pgx closes a connection whose query outlives its
	// context, so a tight deadline on a slow (race-instrumented, shared)
	// machine would keep closing the fresh connections after the return.
	l := startLoad(p, workers, 1000000, 2*time.Second)
	pgtest.WaitFor(t, 20*time.Second, "the pool at full strength", full)
	pgtest.WaitFor(t, 20*time.Second, "1000 queries through the proxy", func() bool { return l.ok.Load() >= 1000 })

	proxy.Stop()
	failedAtStop, dialsAtStop := l.failed.Load(), dials.Load()
	downStart := time.Now()
	// Down long enough for the backoff to reach its cap.
	pgtest.WaitFor(t, 20*time.Second, "3000 failed queries while down", func() bool { return l.failed.Load()-failedAtStop >= 3000 })
	pgtest.WaitFor(t, 20*time.Second, "1.5s of downtime", func() bool { return time.Since(downStart) >= 1500*time.Millisecond })
	down := time.Since(downStart)
	dialsDown := dials.Load() - dialsAtStop
	failedDown := l.failed.Load() - failedAtStop

	statsAtStart := p.Stat().Shoal()
	proxy.Start(t)
	dialsAtStart := dials.Load()
	recovery := pgtest.WaitFor(t, 20*time.Second, "the pool back at full strength", full)
	dialsUp := dials.Load() - dialsAtStart
	okAtUp := l.ok.Load()
	pgtest.WaitFor(t, 20*time.Second, "1000 queries after the return", func() bool { return l.ok.Load() >= okAtUp+1000 })
	l.finish(t)
	statsUp := p.Stat().Shoal()
	dialErrorsUp, closedUp := statsUp.DialErrors-statsAtStart.DialErrors, statsUp.Closed-statsAtStart.Closed
	t.Logf("after the return: %d dial errors, %d connections closed", dialErrorsUp, closedUp)

	t.Logf("down %s: %d queries failed, %d dials; back to %d connections %s after the server returned, with %d dials",
		down.Round(time.Millisecond), failedDown, dialsDown, maxConns, recovery.Round(time.Millisecond), dialsUp)

	// No storm: with a backoff that doubles from 10ms to its 200ms cap (six
	// windows to get there) and at most MaxDialing (4) dials at once, the
	// dials while down are bounded by the number of backoff windows, not by
	// the thousands of failed queries.
	windows := 6 + int(down/(200*time.Millisecond))
	if limit := int64(4 * windows); dialsDown > limit {
		t.Errorf("%d dials while the server was down for %s, want at most %d (a dial storm)", dialsDown, down, limit)
	}
	// Back up, MaxConns dials make the pool whole, plus one for each
	// connection closed since (one that died with the proxy but sat idle
	// until after the return, or whose query outlived its deadline), plus
	// the dials in flight at the end; none fail but those that were already
	// under way when it returned.
	if limit := int64(maxConns) + closedUp + 4; dialsUp > limit {
		t.Errorf("%d dials to get back to %d connections with %d closed, want at most %d", dialsUp, maxConns, closedUp, limit)
	}
	// How soon the pool is back is measured in bench/outage, not asserted
	// here: speed belongs in benchmarks.
	if dialErrorsUp > 4 {
		t.Errorf("%d dials failed after the server returned, more than MaxDialing could have had under way", dialErrorsUp)
	}

	// Every failure says what failed: a dial (errors.Is ErrDial), a query
	// cut off by the proxy going away, or a deadline of an acquire that
	// names the last dial error.
	sawDial := false
	for _, err := range l.errors() {
		switch {
		case errors.Is(err, shoal.ErrDial):
			if !sawDial {
				t.Logf("a failure while down: %v", err)
			}
			sawDial = true
		case errors.Is(err, context.DeadlineExceeded):
			// Deadlines are normal while dials are slow or queries run:
			// the error must say which.
			var ae *shoal.AcquireError
			if errors.As(err, &ae) && ae.LastDial == nil && ae.Dialing == 0 && ae.InUse == 0 {
				t.Errorf("acquire timed out without saying why: %v", err)
			}
		}
	}
	if !sawDial {
		t.Error("no failure while down said the dial failed")
	}
}

// proxy is an in-process toxiproxy between the pool and the server, that can
// be switched off (listener closed, every proxied connection cut) and on again
// on the same address.
type proxy struct {
	p *toxiproxy.Proxy
}

// startProxy starts a proxy to upstream on a free loopback port. It is
// stopped at cleanup.
func startProxy(t *testing.T, upstream string) *proxy {
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	px := &proxy{p: toxiproxy.NewProxy(server, "postgres", "127.0.0.1:0", upstream)}
	if err := px.p.Start(); err != nil {
		t.Fatal(err)
	}
	return px
}

// Addr is the address the pool dials; toxiproxy keeps it across restarts.
func (px *proxy) Addr() string { return px.p.Listen }

// Stop closes the listener and cuts every proxied connection, as a server
// that went away would.
func (px *proxy) Stop() { px.p.Stop() }

// Start listens again on the same address.
func (px *proxy) Start(t *testing.T) {
	var err error
	// The port was just released; binding it again can take a moment.
	for range 100 {
		if err = px.p.Start(); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("proxy: listen again on %s: %v", px.Addr(), err)
}
