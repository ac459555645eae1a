package shoalpgx

import (
	"context"
	"testing"

	"github.com/shoalpool/shoal/internal/pgpair"
)

// A look at an idle connection's role that finds it no longer qualifies
// resets the pool, once: when the pool was reset while the look was under
// way (a refused write on another connection, say), the look's connection
// is retired already and a second reset would only close the connections
// the first one opened to the new primary.
func TestRoleCheckResetsOnlyWhatNoResetRetired(t *testing.T) {
	pair := pgpair.ForTest(t)
	for _, tc := range []struct {
		name       string
		resetFirst bool  // the pool resets while the look is under way
		want       int64 // resets after the look
	}{
		{"the look alone", false, 1},
		{"a reset under way", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := writersPool(t, pair, 2, 0) // looks only when the test calls checkRole
			sessionReadOnly(t, pool)
			if tc.resetFirst {
				pool.beforeRoleQuery = pool.Reset
			}
			pool.checkRole()
			if n := int64(pool.resets.Load()); n != tc.want {
				t.Fatalf("%d resets after the look at a read-only session, want %d", n, tc.want)
			}
		})
	}
}

// sessionReadOnly leaves pool's one idle connection read-only, as a fenced
// primary's would be: the role check cannot tell the two apart.
func sessionReadOnly(t *testing.T, pool *Pool) {
	t.Helper()
	ctx := context.Background()
	c, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY"); err != nil {
		c.Release()
		t.Fatal(err)
	}
	c.Release()
	if idle := pool.Stat().IdleConns(); idle != 1 {
		t.Fatalf("%d idle connections, want the read-only one alone", idle)
	}
}
