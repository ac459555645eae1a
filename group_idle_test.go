package shoal

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// A Group closes a pool idle for IdleTimeout, 5 minutes by default: open
// at 4m59s, closed by 6m15s (maintenance runs at its own period).
func TestGroupIdleTimeoutDefaultsToFiveMinutes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := newTenants(0)
		g := newTestGroup(t, GroupConfig[string, *fakeConn]{Config: ts.config})
		if err := g.Do(context.Background(), "k", func(*fakeConn) error { return nil }); err != nil {
			t.Fatal(err)
		}
		time.Sleep(4*time.Minute + 59*time.Second)
		synctest.Wait()
		if g.Len() != 1 {
			t.Fatal("closed before 5 minutes")
		}
		time.Sleep(76 * time.Second)
		synctest.Wait()
		if g.Len() != 0 {
			t.Fatal("still open after 6m15s")
		}
	})
}

// A negative IdleTimeout keeps pools until Close: a day later the pool
// is still there.
func TestGroupNegativeIdleTimeoutKeepsPools(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := newTenants(0)
		g := newTestGroup(t, GroupConfig[string, *fakeConn]{Config: ts.config, IdleTimeout: -1})
		if err := g.Do(context.Background(), "k", func(*fakeConn) error { return nil }); err != nil {
			t.Fatal(err)
		}
		time.Sleep(24 * time.Hour)
		synctest.Wait()
		if g.Len() != 1 {
			t.Fatal("pool closed with IdleTimeout -1")
		}
	})
}
