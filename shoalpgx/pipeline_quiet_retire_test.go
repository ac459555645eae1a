package shoalpgx

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// quietRetireLock is the advisory lock the abandoned statement of
// TestPipelineQuietConnectionFoundByAnAcquireIsRetired waits for: the test
// holds it, so that the server answers only when the test says.
const quietRetireLock = 8431020771

// A shared connection found quiet behind an abandoned statement, while a
// caller waits behind it, is retired by the next statement's acquire: the
// caller waiting on it still gets its answer, the new statement runs on
// another connection, and the quiet one closes once everything on it is
// answered, though its server was only slow.
func TestPipelineQuietConnectionFoundByAnAcquireIsRetired(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, func(c *Config) { c.CancelTimeout = 200 * time.Millisecond })
	conn := oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	var pid uint32
	if err := p.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	admin := pgtest.AdminConn(t)
	if _, err := admin.Exec(ctx, "select pg_advisory_lock($1)", quietRetireLock); err != nil {
		t.Fatal(err)
	}
	unlocked := false
	unlock := func() {
		if !unlocked {
			unlocked = true
			if _, err := admin.Exec(ctx, "select pg_advisory_unlock($1)", quietRetireLock); err != nil {
				t.Error(err)
			}
		}
	}
	defer unlock()

	// A statement at the server that waits for the test's lock, given up
	// on once written, and a caller's behind it.
	short, giveUp := context.WithCancel(ctx)
	abandoned := make(chan error, 1)
	go func() {
		_, err := p.Exec(short, "select pg_advisory_xact_lock($1)", quietRetireLock)
		abandoned <- err
	}()
	pgtest.WaitFor(t, 5*time.Second, "the waiting statement at the server", func() bool {
		return conn.pace.atServer.Load() == 1
	})
	live := make(chan error, 1)
	go func() {
		_, err := p.Exec(ctx, "select 1")
		live <- err
	}()
	pgtest.WaitFor(t, 5*time.Second, "a caller's statement behind it", func() bool {
		return conn.pace.atServer.Load() == 2
	})
	giveUp()
	if err := <-abandoned; !errors.Is(err, context.Canceled) {
		t.Fatalf("the abandoned statement: %v", err)
	}
	pgtest.WaitFor(t, 5*time.Second, "the connection marked quiet", conn.quiet.Load)

	// The next statement finds it quiet, retires it, and waits for a
	// connection of its own: the quiet one keeps its place until answered.
	type answer struct {
		pid uint32
		err error
	}
	next := make(chan answer, 1)
	go func() {
		var a answer
		a.err = p.QueryRow(ctx, "select pg_backend_pid()").Scan(&a.pid)
		next <- a
	}()
	pgtest.WaitFor(t, 5*time.Second, "the next statement waiting or queued", func() bool {
		conn.mu.Lock()
		queued := len(conn.pending) > 2
		conn.mu.Unlock()
		return p.pipe.core.Stats().Waiting > 0 || queued || len(next) > 0
	})
	unlock()
	if err := <-live; err != nil {
		t.Fatalf("the caller behind the slow statement: %v", err)
	}
	a := <-next
	if a.err != nil {
		t.Fatalf("the statement that found the connection quiet: %v", a.err)
	}
	if a.pid == pid {
		t.Fatalf("the statement that found the connection quiet ran on it (backend %d)", pid)
	}
	pgtest.WaitFor(t, 5*time.Second, "the quiet connection closed once answered", func() bool {
		return !slices.Contains(p.pipe.conns(), conn)
	})
}
