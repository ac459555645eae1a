package shoalpgx

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// TestPipelineSilentConnectionIsReplaced: when the path under the pool's
// connections goes silent for good (the socket open, nothing coming back)
// while new connections reach the server, callers with deadlines return at
// them, and the pool replaces the silent connections, as it replaces a
// whole connection whose server answers neither its statement nor the
// cancel request (CancelTimeout): their callers' abandoned statements
// would otherwise hold their streams, and their places in MaxConns, for
// as long as the sockets stay open.
func TestPipelineSilentConnectionIsReplaced(t *testing.T) {
	cfg, px := proxiedConfig(t, func(c *Config) {
		c.MaxConns = 4
		c.Pipeline = 4
	})
	p := newPoolFor(t, cfg)
	// Before the pool's Close (cleanups run last first): pgx's cleanup of
	// a whole connection on the silent path waits 15s for the server.
	t.Cleanup(closeProxy(px))
	ctx := pgtest.Ctx(t)

	// Shared connections open, and a statement on each.
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() { _, _ = p.Exec(ctx, "select pg_sleep(0.05)") })
	}
	wg.Wait()
	before := p.pipe.conns()
	if len(before) == 0 {
		t.Fatal("no shared connection open")
	}

	px.SilenceOpen()
	const deadline = 300 * time.Millisecond
	bound := 3*defaultCancelTimeout + closeTimeout
	start := time.Now()
	silentLeft := len(before)
	// A round every 50ms at most: callers refused at once by connections
	// found quiet return at once, and the rounds must go on until the
	// silent connections are dropped.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var late, gaveUp atomic.Int64 // the most a caller returned past its deadline; how many gave up
	round := func() {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				cctx, cancel := context.WithTimeout(ctx, deadline)
				defer cancel()
				var n int
				t0 := time.Now()
				err := p.QueryRow(cctx, "select 1").Scan(&n)
				if errors.Is(err, context.DeadlineExceeded) {
					gaveUp.Add(1)
					for took := int64(time.Since(t0) - deadline); ; {
						was := late.Load()
						if took <= was || late.CompareAndSwap(was, took) {
							break
						}
					}
				}
			})
		}
		wg.Wait()
	}
	for i := 0; i < 1000 && time.Since(start) < bound && silentLeft > 0; i++ {
		if i > 0 {
			<-tick.C
			round()
		} else {
			// The first round's callers go on the silent connections,
			// which nothing answers: they must be back before the pool
			// has given any of those up (CancelTimeout without an
			// answer, then as long for the cancel's), as callers who
			// waited for their answers could not be.
			returnsBefore(t, "the silent connections were closed", round)
			for _, c := range before {
				if err := c.broken(); err != nil {
					t.Fatalf("the first callers on the silent connections returned only once one was given up (%v)", err)
				}
			}
			if gaveUp.Load() == 0 {
				t.Fatal("no caller of the first round was held by a silent connection: the test proves nothing")
			}
		}
		open := map[*pipeConn]bool{}
		for _, c := range p.pipe.conns() {
			open[c] = true
		}
		silentLeft = 0
		for _, c := range before {
			if open[c] {
				silentLeft++
			}
		}
	}
	t.Logf("%d callers gave up, at most %s past their deadline", gaveUp.Load(), time.Duration(late.Load()))
	if silentLeft > 0 {
		t.Errorf("%d of the %d shared connections that went silent still open %s after, holding their places in MaxConns (%d)",
			silentLeft, len(before), time.Since(start).Round(time.Millisecond), cfg.MaxConns)
	}
	// And the places they hold are the whole connections' too.
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	tx, err := p.Begin(cctx)
	if err != nil {
		t.Fatalf("a transaction after the silent connections: %v", err)
	}
	_ = tx.Rollback(ctx)
}

// A statement whose caller gave up, alone on its shared connection, is
// cancelled once it has run CancelTimeout without an answer, as a whole
// connection's is at once: the server stops it, and the connection, which
// answered the cancel, stays and serves the next statement.
func TestPipelineAbandonedStatementIsCancelled(t *testing.T) {
	app := pgtest.AppName(t)
	p := newPipelinedPool(t, 2, 8, func(c *Config) {
		c.CancelTimeout = 300 * time.Millisecond
		c.ConnConfig.RuntimeParams["application_name"] = app
	})
	conn := oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	var pid uint32
	if err := p.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := p.Exec(short, "select pg_sleep(30)"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a statement past its deadline: %v", err)
	}
	admin := pgtest.AdminConn(t)
	pgtest.WaitFor(t, 10*time.Second, "the abandoned pg_sleep cancelled at the server, and its answer read", func() bool {
		var running bool
		err := admin.QueryRow(ctx, "select count(*) > 0 from pg_stat_activity where pid = $1 and query like '%pg_sleep(30)%' and state = 'active'", pid).Scan(&running)
		return err == nil && !running && conn.pace.atServer.Load() == 0 && !conn.quiet.Load()
	})
	var again uint32
	if err := p.QueryRow(ctx, "select pg_backend_pid()").Scan(&again); err != nil || again != pid {
		t.Fatalf("after the cancel: backend %d, %v; want the same shared connection's, %d", again, err, pid)
	}
	if cs := p.pipe.conns(); len(cs) != 1 || cs[0] != conn {
		t.Errorf("the shared connection was replaced: %d open", len(cs))
	}
}

// A shared connection found quiet behind an abandoned statement while a
// caller still waits behind it takes statements again once the server
// answers: it was slow, not silent, and is not retired for it.
func TestPipelineQuietClearedWhenSlowHeadAnswers(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, func(c *Config) { c.CancelTimeout = 200 * time.Millisecond })
	conn := oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	abandoned := make(chan error, 1)
	go func() {
		_, err := p.Exec(short, "select pg_sleep(0.8)")
		abandoned <- err
	}()
	pgtest.WaitFor(t, 5*time.Second, "the slow statement at the server", func() bool {
		return conn.pace.atServer.Load() > 0
	})
	live := make(chan error, 1)
	go func() {
		_, err := p.Exec(ctx, "select 1")
		live <- err
	}()
	if err := <-abandoned; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the abandoned statement: %v", err)
	}
	pgtest.WaitFor(t, 5*time.Second, "the connection marked quiet", conn.quiet.Load)
	if err := <-live; err != nil {
		t.Fatalf("the caller behind the slow statement: %v", err)
	}
	var n int
	if err := p.QueryRow(ctx, "select 1").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if conn.quiet.Load() {
		t.Error("the connection is still quiet after the server answered everything on it")
	}
	if cs := p.pipe.conns(); len(cs) != 1 || cs[0] != conn {
		t.Errorf("the shared connection that answered was replaced (%d open)", len(cs))
	}
}

// An abandoned statement queued behind a live one is cancelled once it is
// alone on its connection and has run CancelTimeout, as one abandoned at
// the head is.
func TestPipelineAbandonedBehindLiveIsCancelled(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, func(c *Config) { c.CancelTimeout = 200 * time.Millisecond })
	conn := oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	live := make(chan error, 1)
	go func() {
		_, err := p.Exec(ctx, "select pg_sleep(0.5)")
		live <- err
	}()
	pgtest.WaitFor(t, 5*time.Second, "the live statement at the server", func() bool {
		return conn.pace.atServer.Load() > 0
	})
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := p.Exec(short, "select pg_sleep(30)"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a statement past its deadline: %v", err)
	}
	if err := <-live; err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, 5*time.Second, "the abandoned pg_sleep(30), alone on its connection, cancelled", func() bool {
		return conn.pace.atServer.Load() == 0
	})
}
