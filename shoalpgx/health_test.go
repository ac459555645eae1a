package shoalpgx

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// terminateIdle acquires p's only connection, releases it, has the server
// terminate its backend, and waits until that backend is gone. It returns
// the backend's process id.
func terminateIdle(t *testing.T, p *Pool) uint32 {
	t.Helper()
	ctx := pgtest.Ctx(t)
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid := backendPID(t, c)
	c.Release()
	admin := pgtest.AdminConn(t)
	if _, err := admin.Exec(ctx, "select pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := admin.QueryRow(ctx, "select count(*) from pg_stat_activity where pid = $1", pid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("backend %d still there 10s after pg_terminate_backend", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond) // its goodbye reaches our socket, and peekAfter passes
	return pid
}

// A connection the server terminated while it sat idle (a restart, an admin,
// idle_session_timeout) is replaced on the next acquire, well before
// HealthCheckAfter: the next query does not fail. In plain text the look at
// the socket sees the server's fatal error; over TLS it sees an encrypted
// record and pings, whatever ShouldPing says (docs/from-pgxpool.md).
func TestTerminatedIdleConnectionIsReplaced(t *testing.T) {
	for _, tc := range []struct {
		name          string
		tls, noPingOK bool
	}{{"plain", false, false}, {"TLS", true, false}, {"TLS, ShouldPing false", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPool(t, func(c *Config) {
				c.MaxConns = 1
				c.HealthCheckAfter = time.Hour // no ping for idleness: only the look can trigger one
				if tc.noPingOK {
					c.ShouldPing = func(context.Context, ShouldPingParams) bool { return false }
				}
				if tc.tls {
					// The test server's certificate is Debian's
					// self-signed one: encryption is what is tested.
					c.ConnConfig.TLSConfig = &tls.Config{InsecureSkipVerify: true}
					c.ConnConfig.Fallbacks = nil
				}
			})
			ctx := pgtest.Ctx(t)
			old := terminateIdle(t, p)

			c, err := p.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Release()
			if _, isTLS := c.Conn().PgConn().Conn().(*tls.Conn); isTLS != tc.tls {
				t.Fatalf("connection over TLS: %v, want %v", isTLS, tc.tls)
			}
			if pid := backendPID(t, c); pid == old {
				t.Errorf("acquire handed out the terminated backend %d", pid)
			}
			var one int
			if err := c.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("first query after the idle connection was terminated: %d, %v", one, err)
			}
			pgtest.Settle(t, shoalStats(p))
			if s := p.Stat().Shoal(); s.Dials != 2 || s.Closed != 1 {
				t.Errorf("stats %+v: want the terminated connection closed and one new dial", s)
			}
		})
	}
}

// With HealthCheckAfter 0 every check is off, the look at the socket too:
// the first query after the termination fails, as pgxpool's would, and the
// pool replaces the connection for the next.
func TestIdleCheckOffWithHealthCheckAfterZero(t *testing.T) {
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 1
		c.HealthCheckAfter = 0
	})
	ctx := pgtest.Ctx(t)
	terminateIdle(t, p)
	var one int
	if err := p.QueryRow(ctx, "select 1").Scan(&one); err == nil {
		t.Fatal("query on the terminated connection succeeded with every check off")
	}
	if err := p.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("next query: %d, %v", one, err)
	}
}

// With HealthCheckPeriod set, the maintenance goroutine looks at the idle
// connections' sockets: one the server terminated while it sat idle is
// closed and, MinConns asking for it, replaced without any acquire.
func TestHealthCheckPeriodReplacesATerminatedIdleConnection(t *testing.T) {
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 1
		c.MinConns = 1
		c.HealthCheckPeriod = 20 * time.Millisecond
	})
	// Read before terminateIdle, whose one acquire it adds: after it, the
	// background check may be closing the dead connection, and while a
	// connection closes Stats can miss its hand-outs for a moment.
	acquires := p.Stat().Shoal().Acquires + 1
	terminateIdle(t, p)
	pgtest.WaitFor(t, 10*time.Second, "the terminated connection closed and replaced", func() bool {
		s := p.Stat().Shoal()
		return s.Closed == 1 && s.Dials == 2 && s.IdleConns == 1
	})
	if s := p.Stat().Shoal(); s.Acquires != acquires {
		t.Fatalf("stats %+v: %d acquires since the termination; the background check alone must find it", s, s.Acquires-acquires)
	}
}
