package shoalpgx

import (
	"context"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// A hijacked connection gives its budget permit back, and its slot with
// it: it lets go of the slot's fence lock as it leaves, so that the next
// connection given the slot, in this pool or another process, is not
// refused for as long as the hijacked one lives.
func TestHijackLetsGoOfTheFence(t *testing.T) {
	ctx := pgtest.Ctx(t)
	key := fenceKeyFor(t)
	b := newSlotBudget(key, 0)
	p := newTestPool(t, func(c *Config) { c.Budget = b; c.MaxConns = 1 })
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hijacked := c.Hijack()
	defer hijacked.Close(context.Background())
	if got := lockedSlots(t, ctx, key); len(got) != 0 {
		t.Errorf("the hijacked connection still holds the fence of slot(s) %v, which went back to the budget", got)
	}
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c2, err := p.Acquire(short)
	if err != nil {
		t.Fatalf("Acquire with the hijacked connection's slot, given back: %v (slot refused %d time(s))", err, b.fenced.Load())
	}
	defer c2.Release()
	// The hijacked connection works as before.
	var one int
	if err := hijacked.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 on the hijacked connection: %d, %v", one, err)
	}
}
