package shoalpgx

import (
	"context"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgpair"
)

// A connection the server ended on the primary is replaced alone, in a pool
// that follows a failover: one session's end says nothing of the host, so
// the pool keeps its other connections there.
func TestFailoverEndedSessionIsReplacedAlone(t *testing.T) {
	pair := pgpair.ForTest(t)
	cfg, err := ParseConfig(haString(t, pair, "read-write"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 2
	pool := newPoolFor(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := pool.Acquire(ctx)
	if err != nil {
		a.Release()
		t.Fatal(err)
	}
	kept := b.Conn().PgConn().PID()
	b.Release()
	resets := pool.resets.Load()
	// The server ends a's session, as pg_terminate_backend from elsewhere or
	// idle_session_timeout would.
	_, err = a.Exec(ctx, "SELECT pg_terminate_backend(pg_backend_pid())")
	a.Release()
	if err == nil {
		t.Fatal("a session that terminated itself answered")
	}
	if n := pool.resets.Load(); n != resets {
		t.Fatalf("the pool reset itself %d times after one session ended (%v), want none", n-resets, err)
	}
	c, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if pid := c.Conn().PgConn().PID(); pid != kept {
		t.Fatalf("acquired the session %d, want the idle healthy one %d kept", pid, kept)
	}
}
