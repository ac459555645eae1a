package shoalpgx

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// serverGate holds statements at the server for as long as a test likes:
// an advisory lock the test holds on a connection of its own, which a
// statement with the gate's condition waits for. A statement held at it
// cannot have ended, so a caller that returns meanwhile has returned before
// its answer, however slow the machine: what a test shows by the gate is
// an order, not a time.
type serverGate struct {
	t     *testing.T
	admin *pgx.Conn
	key   int64
	shut  bool
}

// newServerGate returns a gate, shut, with a key of this process's own, n
// telling a test's gates apart: runs side by side on one server do not
// meet, and none takes the small constant keys other tests lock. It opens
// at cleanup.
func newServerGate(t *testing.T, n int) *serverGate {
	t.Helper()
	g := &serverGate{t: t, admin: pgtest.AdminConn(t), key: int64(os.Getpid())<<16 | int64(n)}
	g.close()
	t.Cleanup(g.open)
	return g
}

// cond is a condition that holds, and lets the statement it is part of
// go on, only while the gate is open: it takes the lock shared until the
// statement's transaction ends.
func (g *serverGate) cond() string {
	return fmt.Sprintf("pg_advisory_xact_lock_shared(%d) is not null", g.key)
}

// close shuts the gate, once the statements that passed it have ended.
func (g *serverGate) close() {
	g.t.Helper()
	if g.shut {
		return
	}
	if _, err := g.admin.Exec(pgtest.Ctx(g.t), "select pg_advisory_lock($1)", g.key); err != nil {
		g.t.Fatal(err)
	}
	g.shut = true
}

// open lets the statements held at the gate go on.
func (g *serverGate) open() {
	g.t.Helper()
	if !g.shut {
		return
	}
	if _, err := g.admin.Exec(context.Background(), "select pg_advisory_unlock($1)", g.key); err != nil {
		g.t.Error(err)
	}
	g.shut = false
}

// returnsBefore runs f and fails t unless it returns before what, which
// the test holds back, happens: a guard against the hang a regression
// would cause, not a timing assertion, so its limit is far beyond any
// scheduling delay. f must not touch t: on failure it may outlive the test.
func returnsBefore(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(gateGuard):
		t.Fatalf("still waiting after %s: nothing returned before %s", gateGuard, what)
	}
}

// gateGuard is how long a test waits for what must come while its gate is
// shut.
const gateGuard = 10 * time.Second
