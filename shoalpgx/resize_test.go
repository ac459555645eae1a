package shoalpgx

import (
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// Shrinking while every connection is in use closes the ones over the new
// MaxConns as they come back, so that the server counts no more backends
// than it allows. With pipelining the shared connections' floor takes two
// of MaxConns: the pool is filled with whole connections in the rest and a
// statement in flight on each shared connection, held there on a lock
// until after the shrink.
func TestSetMaxConnsShrinksAtTheServer(t *testing.T) {
	ctx := pgtest.Ctx(t)
	p := newTestPool(t, func(c *Config) { c.MaxConns = 4 })
	admin := pgtest.AdminConn(t)
	backends := func() int {
		var n int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", pgtest.AppName(t)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	whole, releaseShared := 4, func() {}
	if p.pipe != nil {
		whole = 2
		// Both open first, so that each statement has one of its own: a
		// busy shared connection is passed over while another is idle.
		pgtest.WaitFor(t, 10*time.Second, "the two shared connections", func() bool { return p.pipe.core.Stats().TotalConns == 2 })
		releaseShared = holdPipelined(t, p, admin, 2)
	}
	var conns []*Conn
	for range whole {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	if n := backends(); n != 4 {
		t.Fatalf("%d backends at the server with all 4 connections in use", n)
	}
	if err := p.SetMaxConns(2); err != nil {
		t.Fatal(err)
	}
	for _, c := range conns {
		c.Release()
	}
	releaseShared()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := backends()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d backends at the server after shrinking to 2", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s := p.Stat(); s.MaxConns() != 2 || s.TotalConns() != 2 {
		t.Fatalf("Stat after the shrink: max %d total %d", s.MaxConns(), s.TotalConns())
	}
	if err := p.SetMaxConns(0); err == nil {
		t.Fatal("SetMaxConns(0) accepted")
	}
}
