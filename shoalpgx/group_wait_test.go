package shoalpgx

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// A query whose ctx ends while its tenant's pool is being made (a Config
// that fetches credentials, say) fails with an error that names the group
// and the wait, wrapping ctx's, not with ctx's error alone.
func TestGroupWaitForAPoolBeingMadeNamesTheGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePG(t)
		release := make(chan struct{})
		g, err := NewGroup(GroupConfig{
			Name: "tenants",
			Config: func(string) (*Config, error) {
				<-release
				return f.config(t, nil), nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := g.Close(context.Background()); err != nil {
				t.Errorf("Close: %v", err)
			}
		}()
		defer close(release)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = g.Exec(ctx, "acme", "select 1")
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), `group "tenants"`) || !strings.Contains(err.Error(), "pool to be made") {
			t.Fatalf("Exec whose ctx ended while the key's pool was made: %v, want DeadlineExceeded in an error naming the group and the wait", err)
		}
	})
}
