package shoal

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// A new key's pool waits for the pools the group is closing only when the
// budget refuses it for the minimums they still hold: with room in the
// budget, or no budget at all, another key's slow close (a server that
// does not answer its Terminate) does not hold up a tenant's first use.
func TestGroupNewKeyDoesNotWaitForAnUnrelatedSlowClose(t *testing.T) {
	for _, name := range []string{"no budget", "a budget with room"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := GroupConfig[string, *fakeConn]{
					Name:        "tenants",
					Config:      slowCloseTenants(1, 5*time.Second),
					IdleTimeout: time.Minute,
				}
				if name != "no budget" {
					cfg.Budget = mustBudget(t, 4)
				}
				g := newTestGroup(t, cfg)
				ctx := context.Background()
				if err := g.Do(ctx, "a", func(*fakeConn) error { return nil }); err != nil {
					t.Fatal(err)
				}
				for g.Len() == 1 {
					time.Sleep(time.Second)
				}
				// a's pool is closing, its connection 5s from closed.
				start := time.Now()
				if err := g.Do(ctx, "b", func(*fakeConn) error { return nil }); err != nil {
					t.Fatal(err)
				}
				if took := time.Since(start); took != 0 {
					t.Errorf("b's first use took %v, waiting on a's close; want no wait", took)
				}
			})
		})
	}
}
