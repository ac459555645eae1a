package shoalpgx

import (
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// waitStats polls the pool's Stats until ok accepts them, failing the test
// after a deadline.
func waitStats(t *testing.T, p *Pool, what string, ok func(open, idle int) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := p.Stat().Shoal()
		if ok(s.TotalConns+s.Dialing, s.IdleConns) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %d open, %d dialing, %d idle", what, s.TotalConns, s.Dialing, s.IdleConns)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// MinConns is pgxpool's floor on the pool's size, busy or idle: the pool
// dials up to it, keeps it when idle connections are reaped, and dials no
// more while all of them are busy.
func TestMinConnsIsAFloorOnOpenConnections(t *testing.T) {
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 4
		c.MinConns = 2
		c.MaxConnIdleTime = 200 * time.Millisecond // maintenance every 100ms
	})
	ctx := pgtest.Ctx(t)
	waitStats(t, p, "the pool to dial MinConns", func(open, idle int) bool { return open == 2 && idle == 2 })

	a, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Five maintenance passes with both connections busy: MinConns is met,
	// so none of them dials. (MinIdleConns 2 would dial two more.)
	time.Sleep(500 * time.Millisecond)
	if s := p.Stat().Shoal(); s.TotalConns+s.Dialing != 2 {
		t.Errorf("with MinConns 2 and both busy: %d open, %d dialing; want 2 and no dials", s.TotalConns, s.Dialing)
	}

	c, err := p.Acquire(ctx) // nothing idle: dials a third
	if err != nil {
		t.Fatal(err)
	}
	a.Release()
	b.Release()
	c.Release()
	waitStats(t, p, "idle reaping down to MinConns", func(open, _ int) bool { return open == 2 })
	time.Sleep(500 * time.Millisecond)
	if s := p.Stat().Shoal(); s.TotalConns != 2 {
		t.Errorf("after reaping with MinConns 2: %d open, want 2", s.TotalConns)
	}
}

// MinIdleConns keeps that many idle connections, dialling more while others
// are busy.
func TestMinIdleConnsDialsWhileOthersAreBusy(t *testing.T) {
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 4
		c.MinIdleConns = 2
		c.MaxConnIdleTime = 200 * time.Millisecond
	})
	ctx := pgtest.Ctx(t)
	waitStats(t, p, "the pool to dial MinIdleConns", func(open, idle int) bool { return open == 2 && idle == 2 })
	a, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	b, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	waitStats(t, p, "two more idle connections", func(open, idle int) bool { return open == 4 && idle == 2 })
}
