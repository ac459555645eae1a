package shoalpgx

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// gatedBudget is a slotBudget whose permits wait for gate to close.
type gatedBudget struct {
	*slotBudget
	gate chan struct{}
}

func (b *gatedBudget) Acquire(ctx context.Context) (shoal.BudgetPermit, error) {
	select {
	case <-b.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return b.slotBudget.Acquire(ctx)
}

// The look before a dial borrows one of the pool's connections within
// fenceCheckWait. A borrow that took all of that must still leave the
// look's query time of its own: a deadline that ends before or during the
// query used to make the look discard the borrowed connection, so a busy
// pool (whose borrow waits in the queue) lost a good connection at the
// server for every dial. Here the borrow is made slow by BeforeAcquire.
func TestBudgetFenceLookKeepsTheConnectionItBorrows(t *testing.T) {
	ctx := pgtest.Ctx(t)
	// The gate holds the MinConns dials until NewWithConfig has returned,
	// so that the second dial has a connection to look through.
	b := &gatedBudget{slotBudget: newSlotBudget(fenceKeyFor(t), 0, 1), gate: make(chan struct{})}
	b.suspect = true // only a suspect slot's look waits to borrow
	p := newTestPool(t, func(c *Config) {
		c.Budget = b
		c.MaxConns = 2
		c.MinConns = 2
		c.MaxDialing = 1 // the second dial starts once the first connection is open, so it looks
		c.BeforeAcquire = func(context.Context, *pgx.Conn) bool {
			time.Sleep(fenceCheckWait + 20*time.Millisecond)
			return true
		}
	})
	close(b.gate)
	for p.Stat().Shoal().TotalConns < 2 {
		if ctx.Err() != nil {
			t.Fatalf("the pool never opened its 2 connections: %+v", p.Stat().Shoal())
		}
		time.Sleep(time.Millisecond)
	}
	if s := p.Stat().Shoal(); s.Closed != 0 || s.Dials != 2 {
		t.Fatalf("%d connections closed in %d dials; the look must give back the connection it borrowed", s.Closed, s.Dials)
	}
}

// A busy pool's look waits in the queue with the callers, for as long as
// its connections take to come back: here the only one is held 300ms. A
// look that gave up sooner (it waited 100ms) connected and let the lock
// refuse the slot, so the server saw a connection above the budget for a
// moment, which internal/clustertest's stopped-worker scenario counted.
func TestBudgetFenceLookWaitsItsTurnOnABusyPool(t *testing.T) {
	ctx := pgtest.Ctx(t)
	s := newFenceScene(t, fenceKeyFor(t), 1)
	b := newSlotBudget(s.key, 0, 1)
	b.suspect = true // only a suspect slot's look waits to borrow
	p := newTestPool(t, s.pool(b, func(c *Config) { c.MaxConns = 2 }))
	held, err := p.Acquire(ctx) // slot 0
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(held.Release)
	done := make(chan error, 1)
	go func() { // makes the pool dial with slot 1, whose look queues
		c, err := p.Acquire(ctx)
		if err == nil {
			c.Release()
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	held.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for b.fenced.Load() == 0 {
		if ctx.Err() != nil {
			t.Fatal("the budget was never told that slot 1 was refused")
		}
		time.Sleep(time.Millisecond)
	}
	if n := s.connects.Load(); n != 1 {
		t.Fatalf("%d connects; the look must have waited for the held connection and refused slot 1 without one", n)
	}
}

// A slot that is not suspect is looked at too before its dial, through a
// connection of the pool's that is idle at that moment, without waiting for
// one: a slot another session holds is then refused without a connection.
// Here the pool's second MinConns dial, with slot 1, finds the first
// connection idle.
func TestBudgetFenceLooksThroughAnIdleConnection(t *testing.T) {
	s := newFenceScene(t, fenceKeyFor(t), 1)
	// The gate holds the MinConns dials until NewWithConfig has returned,
	// so that the second dial has a connection to look through.
	b := &gatedBudget{slotBudget: newSlotBudget(s.key, 0, 1), gate: make(chan struct{})}
	p := newTestPool(t, s.pool(b, func(c *Config) {
		c.MaxConns = 2
		c.MinConns = 2
		c.MaxDialing = 1 // the second dial starts once the first connection is open
	}))
	close(b.gate)
	pgtest.WaitFor(t, 10*time.Second, "slot 1 refused", func() bool { return b.fenced.Load() > 0 })
	if n := s.connects.Load(); n != 1 {
		t.Fatalf("%d connects; the refused slot must cost none", n)
	}
	if st := p.Stat().Shoal(); st.TotalConns != 1 {
		t.Fatalf("%+v, want the one connection of slot 0", st)
	}
}
