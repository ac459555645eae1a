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
			oneIdle(t, pool)
			fence(t, pair)
			if tc.resetFirst {
				pool.beforeRoleQuery = pool.Reset
			}
			pool.checkRole()
			if n := int64(pool.resets.Load()); n != tc.want {
				t.Fatalf("%d resets after the look at a fenced primary, want %d", n, tc.want)
			}
		})
	}
}

// A session its caller made read-only (SET SESSION CHARACTERISTICS) on a
// primary that takes writes is no fence: the look at it leaves the pool
// as it is. Before, the look read the session's own setting and reset the
// pool.
func TestRoleCheckIgnoresASessionMadeReadOnly(t *testing.T) {
	pair := pgpair.ForTest(t)
	pool := writersPool(t, pair, 2, 0)
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
	oneIdle(t, pool)
	pool.checkRole()
	if n := pool.resets.Load(); n != 0 {
		t.Fatalf("%d resets after the look at a session made read-only by its caller, want none", n)
	}
}

// oneIdle acquires and releases one of pool's connections and checks that
// it is the pool's only one, idle, for the look to take.
func oneIdle(t *testing.T, pool *Pool) {
	t.Helper()
	c, err := pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	if idle := pool.Stat().IdleConns(); idle != 1 {
		t.Fatalf("%d idle connections, want one", idle)
	}
}

// fence turns default_transaction_read_only on for the pair's primary, as
// a cluster manager fencing it would, until t ends.
func fence(t *testing.T, pair *pgpair.Pair) {
	t.Helper()
	if err := pair.SetReadOnly(context.Background(), pair.Primary, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pair.SetReadOnly(context.Background(), pair.Primary, false); err != nil {
			t.Errorf("lifting the fence: %v", err)
		}
	})
}
