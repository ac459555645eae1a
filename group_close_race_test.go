package shoal

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// Callers who came for a key whose pool was being made when Close was
// called fail with ErrClosed, as the caller making it does: none is handed
// the pool, which the group closes, nor runs its function on it.
func TestGroupCloseFailsEveryCallerOfAPoolBeingMade(t *testing.T) {
	for range 20 {
		synctest.Test(t, func(t *testing.T) {
			ts := newTenants(1)
			release := make(chan struct{})
			g, err := NewGroup(GroupConfig[string, *fakeConn]{Config: func(key string) (Config[*fakeConn], error) {
				<-release
				return ts.config(key)
			}})
			if err != nil {
				t.Fatal(err)
			}
			var ran atomic.Int32
			const callers = 4
			errs := make(chan error, callers)
			for range callers {
				go func() {
					errs <- g.Do(context.Background(), "slow", func(*fakeConn) error { ran.Add(1); return nil })
				}()
				synctest.Wait() // the first is inside Config, the others wait for it
			}
			closed := make(chan error, 1)
			go func() { closed <- g.Close(context.Background()) }()
			synctest.Wait()
			close(release)
			if err := <-closed; err != nil {
				t.Fatalf("Close: %v", err)
			}
			for range callers {
				if err := <-errs; !errors.Is(err, ErrClosed) {
					t.Errorf("Do on a key whose pool was being made at Close: %v, want ErrClosed", err)
				}
			}
			if n := ran.Load(); n != 0 {
				t.Fatalf("%d callers ran on the pool the group closed", n)
			}
			if n := ts.open.Load(); n != 0 {
				t.Fatalf("%d connections open after Close", n)
			}
		})
	}
}
