package shoalpgx

import (
	"context"
	"maps"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgpair"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// heldDial holds, once armed, the next connection made to one port in
// AfterConnect, inside the dial, until let go: a dial under way.
type heldDial struct {
	port  uint16
	armed atomic.Bool
	pid   atomic.Uint32
	held  chan struct{} // closed once a dial is held
	let   chan struct{} // closed to let it go on
}

func (h *heldDial) afterConnect(_ context.Context, c *pgx.Conn) error {
	if c.Config().Port == h.port && h.armed.CompareAndSwap(true, false) {
		h.pid.Store(c.PgConn().PID())
		close(h.held)
		<-h.let
	}
	return nil
}

// idlePIDs returns the backends of pool's idle whole connections.
func idlePIDs(pool *Pool) map[uint32]bool {
	pids := map[uint32]bool{}
	for _, c := range pool.AcquireAllIdle(context.Background()) {
		pids[c.Conn().PgConn().PID()] = true
		c.Release()
	}
	return pids
}

// disjoint reports whether a and b have no key in common.
func disjoint(a, b map[uint32]bool) bool {
	for k := range a {
		if b[k] {
			return false
		}
	}
	return true
}

// With Pipeline on the HA pair, Pool.Reset closes the connections of both
// of the pool's core pools, whole and shared, and leaves the read pool's;
// ReadPool.Reset closes the read pool's, of both kinds, and leaves the
// pool's. A shared connection whose dial was under way at the Reset is
// closed as it lands, and serves nothing.
func TestPipelineResetReachesBothCores(t *testing.T) {
	pair := pgpair.ForTest(t)
	port, err := strconv.Atoi(pair.Primary.Port)
	if err != nil {
		t.Fatal(err)
	}
	hold := &heldDial{port: uint16(port), held: make(chan struct{}), let: make(chan struct{})}
	cfg, err := ParseConfig(haString(t, pair, "read-write", "pool_pipeline=4"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns, cfg.RoleCheckPeriod = 6, 0
	cfg.AfterConnect = hold.afterConnect
	pool := newPoolFor(t, cfg)
	reads := pool.Reads()
	ctx := pgtest.Ctx(t)
	// A whole connection and the shared ones, in each pool.
	for _, q := range []interface {
		Acquire(context.Context) (*Conn, error)
		rowQuerier
	}{pool, reads} {
		c, err := q.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c.Release()
		if _, err := tryPort(q); err != nil {
			t.Fatal(err)
		}
	}
	pgtest.WaitFor(t, 5*time.Second, "two shared connections in each pool", func() bool {
		return len(pool.pipe.conns()) == 2 && len(reads.p.pipe.conns()) == 2
	})
	whole, shared := idlePIDs(pool), pipePIDs(pool)
	readWhole, readShared := idlePIDs(reads.p), pipePIDs(reads.p)
	if len(whole) != 1 || len(readWhole) != 1 {
		t.Fatalf("%d idle whole connections in the pool, %d in the read pool; want one each", len(whole), len(readWhole))
	}

	pool.Reset()
	if got := pool.core.Stats().ClosedFor(shoal.ReasonReset); got != 1 {
		t.Errorf("Pool.Reset closed %d whole connections, want the idle one", got)
	}
	pgtest.WaitFor(t, 5*time.Second, "two new shared connections", func() bool {
		now := pipePIDs(pool)
		return len(now) == 2 && disjoint(now, shared)
	})
	if !maps.Equal(idlePIDs(reads.p), readWhole) || !maps.Equal(pipePIDs(reads.p), readShared) {
		t.Errorf("Pool.Reset touched the read pool: whole %v then %v, shared %v then %v",
			readWhole, idlePIDs(reads.p), readShared, pipePIDs(reads.p))
	}

	reads.Reset()
	if got := reads.p.core.Stats().ClosedFor(shoal.ReasonReset); got != 1 {
		t.Errorf("ReadPool.Reset closed %d whole read connections, want the idle one", got)
	}
	pgtest.WaitFor(t, 5*time.Second, "the read pool's shared connections closed", func() bool {
		return disjoint(pipePIDs(reads.p), readShared)
	})
	if got := pool.core.Stats().ClosedFor(shoal.ReasonReset) + pool.pipe.core.Stats().ClosedFor(shoal.ReasonReset); got != 3 {
		t.Errorf("after ReadPool.Reset the pool has %d connections closed for a Reset, want the 3 of its own", got)
	}

	// A shared dial held inside its dial, past a Reset.
	shared = pipePIDs(pool)
	closedBefore := pool.pipe.core.Stats().ClosedFor(shoal.ReasonReset)
	hold.armed.Store(true)
	pool.Reset()
	<-hold.held
	pool.Reset()
	close(hold.let)
	pgtest.WaitFor(t, 5*time.Second, "two shared connections after the Resets", func() bool {
		s := pool.pipe.core.Stats()
		return s.TotalConns == 2 && s.Dialing == 0
	})
	now := pipePIDs(pool)
	if now[hold.pid.Load()] {
		t.Fatalf("the shared connection dialled during the Reset (backend %d) was kept", hold.pid.Load())
	}
	if !disjoint(now, shared) {
		t.Fatalf("shared connections %v outlived the Reset", shared)
	}
	// Each statement at once on its own connection, to reach each of them.
	for range 4 {
		var pid uint32
		if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		if pid == hold.pid.Load() {
			t.Fatalf("a statement ran on backend %d, dialled before the Reset", pid)
		}
	}
	// The two open before, and the held one, at least.
	if got := pool.pipe.core.Stats().ClosedFor(shoal.ReasonReset) - closedBefore; got < 3 {
		t.Errorf("%d shared connections closed for the Resets, want at least 3", got)
	}
}
