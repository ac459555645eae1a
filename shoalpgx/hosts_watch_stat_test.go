package shoalpgx

import (
	"context"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgpair"
)

// The look at an idle connection every RoleCheckPeriod counts in the
// statistics as an acquire that did not wait, as the docs say, so that a
// pool's acquire rate is not mistaken for its callers' alone.
func TestRoleCheckCountsAsAnAcquireThatDidNotWait(t *testing.T) {
	pair := pgpair.ForTest(t)
	cfg, err := ParseConfig(haString(t, pair, "read-write"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns, cfg.RoleCheckPeriod = 1, 20*time.Millisecond
	pool := newPoolFor(t, cfg)
	if _, err := pool.Exec(context.Background(), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	before := pool.Stat()
	eventually(t, 10*time.Second, "a role look counted as an acquire", func() bool {
		return pool.Stat().AcquireCount() > before.AcquireCount()
	})
	after := pool.Stat()
	if after.EmptyAcquireCount() != before.EmptyAcquireCount() {
		t.Fatalf("the role looks counted %d acquires that waited, want none", after.EmptyAcquireCount()-before.EmptyAcquireCount())
	}
}
