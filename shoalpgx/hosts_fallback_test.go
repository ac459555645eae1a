package shoalpgx

import (
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgpair"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// preferStandbyOnPrimary opens a prefer-standby pool on the pair whose
// standby, named first, is behind a proxy that refuses connections, so
// that the pool falls back to the primary; it holds one fallback
// connection, idle, on return. mutate, when not nil, changes its Config
// first.
func preferStandbyOnPrimary(t *testing.T, pair *pgpair.Pair, mutate func(*Config)) (*Pool, *pgpair.Proxy) {
	t.Helper()
	standby, err := pgpair.NewProxy(pair.Standby.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { standby.Close() })
	standby.Refuse(true)
	cfg, err := ParseConfig(haString(t, pair, "prefer-standby"))
	if err != nil {
		t.Fatal(err)
	}
	setHosts(t, cfg, standby.Addr(), pair.Primary.Addr)
	cfg.MaxConns = 2
	if mutate != nil {
		mutate(cfg)
	}
	p := newPoolFor(t, cfg)
	c, err := p.Acquire(dialCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	addr, role := c.Host()
	c.Release()
	if addr != pair.Primary.Addr || role != RolePrimary {
		t.Fatalf("with the standby refusing, the connection is on %s (%s), want the primary %s", addr, role, pair.Primary.Addr)
	}
	return p, standby
}

// A prefer-standby pool that fell back to the primary looks for a standby
// every RoleCheckPeriod, and once one answers its connections go there:
// the primary's are closed.
func TestPreferStandbyMovesBackToTheStandby(t *testing.T) {
	pair := pgpair.ForTest(t)
	p, standby := preferStandbyOnPrimary(t, pair, func(c *Config) { c.RoleCheckPeriod = 20 * time.Millisecond })
	standby.Refuse(false)
	ctx := dialCtx(t)
	waitForAcquireOn(t, ctx, p, standby.Addr(), RoleStandby)
	pgtest.WaitFor(t, 5*time.Second, "the primary's connections closed", func() bool {
		return hostStat(t, p.Hosts(), pair.Primary.Addr).Open == 0
	})
}

// The look for a standby dials, so a pool under a Budget, whose every
// connection the budget grants, does not look: the same look on the same
// pool without one tries the standby.
func TestFallbackProbeSkippedUnderABudget(t *testing.T) {
	pair := pgpair.ForTest(t)
	budget, err := shoal.NewBudget(2, shoal.BudgetName("fallback"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		budget shoal.Budget
		looks  bool
	}{{nil, true}, {budget, false}} {
		p, standby := preferStandbyOnPrimary(t, pair, func(cfg *Config) {
			cfg.RoleCheckPeriod = 0 // no look but the one below
			cfg.Budget = c.budget
		})
		before := standby.Accepted()
		p.probeFallback()
		if looked := standby.Accepted() > before; looked != c.looks {
			t.Errorf("with a Budget %t: the look tried the standby %t, want %t", c.budget != nil, looked, c.looks)
		}
	}
}
