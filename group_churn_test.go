package shoal

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// slowCloseTenants is tenants whose connections take a while to close, as
// a database connection's Terminate and socket close do.
func slowCloseTenants(minConns int, closeTakes time.Duration) func(string) (Config[*fakeConn], error) {
	ts := newTenants(minConns)
	return func(key string) (Config[*fakeConn], error) {
		cfg, err := ts.config(key)
		if err != nil {
			return cfg, err
		}
		closeConn := cfg.Close
		cfg.Close = func(c *fakeConn) error {
			time.Sleep(closeTakes)
			return closeConn(c)
		}
		return cfg, nil
	}
}

// slowCloseGroup makes a group named "tenants" of slowCloseTenants with a
// minimum of one each, under a budget of budgetConns; cfg says the rest
// (MaxPools, IdleTimeout). A pool it evicts or closes for idleness keeps
// its minimum out of the budget until its connection has closed.
func slowCloseGroup(t *testing.T, budgetConns int, closeTakes time.Duration, cfg GroupConfig[string, *fakeConn]) *Group[string, *fakeConn] {
	t.Helper()
	cfg.Name = "tenants"
	cfg.Config = slowCloseTenants(1, closeTakes)
	cfg.Budget = mustBudget(t, budgetConns)
	return newTestGroup(t, cfg)
}

// With MaxPools pools whose minimums fill the budget, a new key evicts the
// least recently used idle pool, and gets a pool of its own: the evicted
// pool's minimum goes back to the budget before the new pool joins it,
// however long its connections take to close.
func TestGroupEvictionMakesRoomInTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := slowCloseGroup(t, 2, 10*time.Millisecond, GroupConfig[string, *fakeConn]{
			MaxPools:    2,
			IdleTimeout: -1,
		})
		ctx := context.Background()
		for _, k := range []string{"a", "b", "c", "a"} {
			if err := g.Do(ctx, k, func(*fakeConn) error { return nil }); err != nil {
				t.Fatalf("Do(%s) with MaxPools 2 and room for 2 minimums: %v", k, err)
			}
			time.Sleep(time.Second)
		}
	})
}

// A key used again just after its pool was closed for idleness gets a new
// pool, even when the minimums fill the budget and the old pool's
// connections are still closing.
func TestGroupIdleCloseMakesRoomInTheBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := slowCloseGroup(t, 1, 5*time.Second, GroupConfig[string, *fakeConn]{
			IdleTimeout: time.Minute,
		})
		ctx := context.Background()
		if err := g.Do(ctx, "a", func(*fakeConn) error { return nil }); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		for g.Len() == 1 {
			time.Sleep(time.Second)
		}
		if err := g.Do(ctx, "a", func(*fakeConn) error { return nil }); err != nil {
			t.Fatalf("Do(a) just after its pool was closed for idleness: %v", err)
		}
	})
}
