package shoalpgx

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgpair"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A primary fenced, the pool reset by its look at the role (RoleCheckPeriod)
// before the standby is promoted: the pool has no connection left on the
// old primary when its first dial lands on the new one, and keeps that
// connection and those of the dials under way with it. Another Reset there
// would close each of them as it lands (Pool.Reset: the core cannot tell a
// dial to the new host from one to the old), to be dialled again.
func TestFailoverKeepsTheFirstConnectionsToTheNewPrimary(t *testing.T) {
	for _, pipeline := range []int{0, 8} {
		t.Run(fmt.Sprintf("pipeline=%d", pipeline), func(t *testing.T) { keepsFirstConnections(t, pipeline) })
	}
}

func keepsFirstConnections(t *testing.T, pipeline int) {
	pair := pgpair.ForTest(t)
	ctx := pgtest.Ctx(t)
	cfg, err := ParseConfig(pair.HA)
	if err != nil {
		t.Fatal(err)
	}
	seen := &dialsSeen{byPort: map[uint16]int{}}
	cfg.MaxConns, cfg.Pipeline, cfg.RoleCheckPeriod = 4, pipeline, 50*time.Millisecond
	if pipeline == 0 {
		cfg.MinConns = 2 // as the shared connections' floor
	}
	cfg.AfterConnect = seen.afterConnect
	pool := newPoolFor(t, cfg)
	onHost := func(addr string) int {
		for _, h := range pool.Hosts() {
			if h.Addr == addr {
				return h.Open
			}
		}
		return 0
	}
	if _, err := pool.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, 5*time.Second, "two connections on the primary", func() bool { return onHost(pair.Primary.Addr) == 2 })
	if err := pair.SetReadOnly(ctx, pair.Primary, true); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, 5*time.Second, "the look at the role resets the pool", func() bool { return pool.resets.Load() > 0 })
	pgtest.WaitFor(t, 5*time.Second, "no connection left on the old primary", func() bool { return onHost(pair.Primary.Addr) == 0 })
	if err := pair.Promote(ctx, pair.Standby); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, 10*time.Second, "two connections on the new primary", func() bool {
		return onHost(pair.Standby.Addr) == 2 && pool.Stat().Shoal().Dialing == 0
	})
	made := seen.to(pair.Standby.Port)
	if made != 2 || pool.resets.Load() != 1 {
		t.Fatalf("%d connections made to the new primary for the 2 open there, %d resets; want every one kept, and the one reset", made, pool.resets.Load())
	}
}
