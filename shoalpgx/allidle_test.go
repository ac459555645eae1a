package shoalpgx

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// AcquireAllIdle takes every idle connection at once, runs PrepareConn on
// each and closes those it refuses or fails, as pgxpool's does.
func TestAcquireAllIdleAppliesPrepareConn(t *testing.T) {
	var mu sync.Mutex
	refuse := map[uint32]error{} // by backend: the error to fail it with, nil to refuse it
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 4
		c.PrepareConn = func(_ context.Context, conn *pgx.Conn) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			err, ok := refuse[conn.PgConn().PID()]
			if !ok {
				return true, nil
			}
			return err != nil, err // true with an error, or false with none
		}
	})
	ctx := pgtest.Ctx(t)
	var held []*Conn
	for range 4 {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		t.Cleanup(c.Release) // before the pool's Close, which waits for it, if the test fails early
	}
	kept := backendPID(t, held[2])
	mu.Lock()
	refuse[backendPID(t, held[0])] = nil                          // false, nil
	refuse[backendPID(t, held[1])] = errors.New("failed prepare") // true, an error
	mu.Unlock()
	for _, c := range held[:3] {
		c.Release()
	}
	// held[3] stays held: AcquireAllIdle takes only the idle ones.

	all := p.AcquireAllIdle(ctx)
	for _, c := range all {
		t.Cleanup(c.Release)
	}
	if len(all) != 1 {
		t.Fatalf("AcquireAllIdle returned %d connections, want the 1 idle one PrepareConn kept", len(all))
	}
	if pid := backendPID(t, all[0]); pid != kept {
		t.Errorf("AcquireAllIdle returned backend %d, want %d", pid, kept)
	}
	pgtest.WaitFor(t, 10*time.Second, "the 2 connections PrepareConn refused or failed closed", func() bool { return p.Stat().Shoal().Closed == 2 })
	if s := p.Stat().Shoal(); s.IdleConns != 0 || s.InUseConns != 2 {
		t.Errorf("stats %+v: want nothing idle and 2 held", s)
	}
	all[0].Release()
	held[3].Release()
	if s := p.Stat().Shoal(); s.IdleConns != 2 {
		t.Errorf("stats %+v: want the 2 released connections idle", s)
	}
	if got := p.AcquireAllIdle(ctx); len(got) != 2 {
		t.Errorf("second AcquireAllIdle returned %d connections, want 2", len(got))
	} else {
		for _, c := range got {
			c.Release()
		}
	}
}

// With pipelining, AcquireAllIdle takes the idle whole connections only:
// the shared ones, idle or not, stay the pipelined statements'.
func TestAcquireAllIdleLeavesSharedConnections(t *testing.T) {
	p := newPipelinedPool(t, 6, 8, nil)
	ctx := pgtest.Ctx(t)
	pgtest.WaitFor(t, 5*time.Second, "two shared connections open", func() bool { return len(p.pipe.conns()) == 2 })
	openWhole(t, ctx, p, 2)
	shared := pipePIDs(p)
	all := p.AcquireAllIdle(ctx)
	for _, c := range all {
		t.Cleanup(c.Release)
	}
	if len(all) != 2 {
		t.Fatalf("AcquireAllIdle returned %d connections, want the 2 idle whole ones", len(all))
	}
	for _, c := range all {
		if pid := backendPID(t, c); shared[pid] {
			t.Fatalf("AcquireAllIdle returned shared connection %d", pid)
		}
	}
	var n int
	if err := p.QueryRow(ctx, "select $1::int", 5).Scan(&n); err != nil || n != 5 {
		t.Fatalf("a pipelined statement beside every whole connection taken: %d, %v", n, err)
	}
}
