package shoal

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// A caller whose ctx ends while its key's pool is being made gets an
// error that names the group and what it waited for, wrapping ctx's: a
// bare "context deadline exceeded" says nothing of which group, nor that
// the wait was on a tenant's Config rather than on a connection.
func TestGroupWaitForAPoolBeingMadeNamesTheGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := newTenants(0)
		release := make(chan struct{})
		g := newTestGroup(t, GroupConfig[string, *fakeConn]{Name: "tenants", Config: func(key string) (Config[*fakeConn], error) {
			<-release
			return ts.config(key)
		}})
		defer synctest.Wait()
		defer close(release)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := g.Acquire(ctx, "slow")
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `group "tenants"`) || !strings.Contains(err.Error(), "pool to be made") {
			t.Fatalf("Acquire whose ctx ended while the key's pool was made: %v, want DeadlineExceeded in an error naming the group and the wait", err)
		}
	})
}
