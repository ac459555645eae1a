package shoal

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// Acquire waits within its ctx, the caller whose first use of a key
// makes its pool included: a slow Config (a tenant's credentials fetched
// from a vault, say) holds that caller no longer than its ctx, as it
// holds those who came for the key after it. The pool is made all the
// same, and the next caller gets it.
func TestGroupAcquireWaitsWithinCtxForASlowConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := newTenants(0)
		release := make(chan struct{})
		g := newTestGroup(t, GroupConfig[string, *fakeConn]{Config: func(key string) (Config[*fakeConn], error) {
			<-release
			return ts.config(key)
		}})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		var waited time.Duration
		done := make(chan error, 1)
		go func() {
			l, err := g.Acquire(ctx, "slow")
			waited = time.Since(start)
			if err == nil {
				l.Release()
			}
			done <- err
		}()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) || waited != time.Second {
				t.Fatalf("Acquire with a 1s ctx: %v after %v, want DeadlineExceeded after 1s", err, waited)
			}
		default:
			close(release)
			<-done
			t.Fatal("Acquire with a 1s ctx still waiting for Config after 2s")
		}
		close(release)
		synctest.Wait()
		if err := g.Do(context.Background(), "slow", func(*fakeConn) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if n := ts.configCalls("slow"); n != 1 {
			t.Fatalf("Config called %d times, want once: the pool made for the caller who left is kept", n)
		}
	})
}
