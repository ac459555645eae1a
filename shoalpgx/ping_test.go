package shoalpgx

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/syncbuf"

	"github.com/shoalpool/shoal/internal/pgpair"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// pingingPool is a pool of one connection through a proxy whose acquires
// ping a connection idle for more than a millisecond, with warm the
// backend of its connection, idle long enough for the next acquire to ping
// it.
func pingingPool(t *testing.T, mutate func(*Config)) (p *Pool, g *pgpair.Proxy, warm uint32) {
	t.Helper()
	cfg, g := proxiedConfig(t, func(c *Config) {
		c.MaxConns = 1
		c.HealthCheckAfter = time.Millisecond
		if mutate != nil {
			mutate(c)
		}
	})
	p = newPoolFor(t, cfg)
	t.Cleanup(closeProxy(g)) // before the pool's cleanup: see proxiedConfig
	warm = warmPID(t, p)
	time.Sleep(10 * time.Millisecond) // idle past HealthCheckAfter
	return p, g, warm
}

// A caller who gives up while its connection is being pinged gets its
// context's error at once, and the healthy connection is not lost: the
// ping goes on without the caller, and the connection goes back to the
// pool when it answers (pgx issue #2680). A ping run under the caller's
// context would have had pgx close the connection when the caller left.
func TestPingOutlivesTheCallersCancel(t *testing.T) {
	p, g, warm := pingingPool(t, nil)
	g.HoldOpen()
	ctx, cancel := context.WithCancel(pgtest.Ctx(t))
	defer cancel()
	go func() {
		<-g.Held() // the ping waits at the proxy
		cancel()
	}()
	if _, err := p.Acquire(ctx); err != context.Canceled {
		t.Fatalf("Acquire: %v, want context.Canceled itself, as pgxpool returns", err)
	}
	if s := p.Stat().Shoal(); s.InUseConns != 1 {
		t.Fatalf("stats %+v: the ping should still hold the connection", s)
	}
	g.Release()
	pgtest.WaitFor(t, 10*time.Second, "the pinged connection back in the pool", func() bool { return p.Stat().Shoal().IdleConns == 1 })
	if got := warmPID(t, p); got != warm {
		t.Fatalf("next acquire got backend %d, want the healthy one (%d) the cancelled acquire pinged", got, warm)
	}
	if s := p.Stat().Shoal(); s.Closed != 0 {
		t.Fatalf("stats %+v: no connection should have closed", s)
	}
}

// A ping whose caller left and that then fails closes its connection.
func TestAbandonedPingThatFailsClosesTheConnection(t *testing.T) {
	p, g, _ := pingingPool(t, nil)
	g.HoldOpen()
	ctx, cancel := context.WithCancel(pgtest.Ctx(t))
	defer cancel()
	go func() {
		<-g.Held()
		cancel()
	}()
	if _, err := p.Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire: %v, want context.Canceled", err)
	}
	g.Cut()
	pgtest.WaitFor(t, 10*time.Second, "the connection whose ping failed closed", func() bool { return p.Stat().Shoal().Closed == 1 })
	if s := p.Stat().Shoal(); s.InUseConns != 0 || s.IdleConns != 0 {
		t.Fatalf("stats %+v: the dead connection must be neither held nor idle", s)
	}
}

// A caller whose deadline passes while its connection is being pinged is
// treated as one who cancels: it gets its context's error at once, and the
// ping goes on under the pool's own bound, so that a deadline tighter than
// a ping's round trip does not cost a healthy connection. The deadline
// here passes while the proxy holds the ping.
func TestPingOutlivesTheCallersDeadline(t *testing.T) {
	p, g, warm := pingingPool(t, nil)
	g.HoldOpen()
	ctx, cancel := context.WithTimeout(pgtest.Ctx(t), 300*time.Millisecond)
	defer cancel()
	_, err := p.Acquire(ctx)
	select {
	case <-g.Held():
	default:
		t.Fatalf("Acquire returned %v before its ping reached the proxy: the deadline came too soon for this machine", err)
	}
	if err != context.DeadlineExceeded {
		t.Fatalf("Acquire: %v, want context.DeadlineExceeded itself, as for a cancel", err)
	}
	if s := p.Stat().Shoal(); s.InUseConns != 1 || s.Closed != 0 {
		t.Fatalf("stats %+v: the ping should still hold the connection past the caller's deadline", s)
	}
	g.Release()
	pgtest.WaitFor(t, 10*time.Second, "the pinged connection out of use", func() bool { return p.Stat().Shoal().InUseConns == 0 })
	pgtest.Settle(t, shoalStats(p))
	if s := p.Stat().Shoal(); s.Closed != 0 || s.IdleConns != 1 {
		t.Fatalf("stats %+v: want the healthy connection back in the pool, none closed", s)
	}
	if got := warmPID(t, p); got != warm {
		t.Fatalf("next acquire got backend %d, want the healthy one (%d) whose ping outlived the deadline", got, warm)
	}
}

// A ping that outlives its caller's deadline is still bounded by the
// pool's own PingTimeout: a server that does not answer has the connection
// closed then, rather than held for the abandoned ping's minute.
func TestPingPastTheCallersDeadlineIsBoundedByPingTimeout(t *testing.T) {
	p, g, _ := pingingPool(t, func(c *Config) {
		c.PingTimeout = 500 * time.Millisecond
		c.Logger = slog.New(slog.DiscardHandler) // the failed ping's Warn
	})
	g.HoldOpen()
	ctx, cancel := context.WithTimeout(pgtest.Ctx(t), 100*time.Millisecond)
	defer cancel()
	_, err := p.Acquire(ctx)
	select {
	case <-g.Held():
	default:
		t.Fatalf("Acquire returned %v before its ping reached the proxy: the deadline came too soon for this machine", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire: %v, want context.DeadlineExceeded", err)
	}
	pgtest.WaitFor(t, 10*time.Second, "the ping given up after PingTimeout", func() bool { return p.Stat().Shoal().InUseConns == 0 })
	// pgx's close of the dead connection waits for the server to hang up
	// (behind the holding proxy, up to closeTimeout): cut, so it need not.
	g.Cut()
	pgtest.WaitFor(t, 10*time.Second, "the connection whose ping did not answer closed", func() bool { return p.Stat().Shoal().Closed == 1 })
}

// PingTimeout bounds the ping on its own: a connection that does not answer
// within it is closed, with a Warn line that names the pool, and the
// acquire goes on with a new connection.
func TestPingTimeoutReplacesAConnectionThatDoesNotAnswer(t *testing.T) {
	var logs syncbuf.Buffer
	p, g, warm := pingingPool(t, func(c *Config) {
		c.PingTimeout = 100 * time.Millisecond
		c.Name = "pinged"
		c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	g.HoldOpen() // the warm connection only: a new one passes
	type result struct {
		c   *Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := p.Acquire(pgtest.Ctx(t))
		done <- result{c, err}
	}()
	<-g.Held()
	pgtest.WaitFor(t, 10*time.Second, "the ping given up after PingTimeout", func() bool { return p.Stat().Shoal().InUseConns == 0 })
	g.Cut() // as above: the close need not wait for the server
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.c.Release()
	if got := backendPID(t, r.c); got == warm {
		t.Fatalf("Acquire handed out backend %d, whose ping could not have answered", got)
	}
	pgtest.WaitFor(t, 10*time.Second, "the silent connection closed", func() bool { return p.Stat().Shoal().Closed == 1 })
	var line string
	for l := range strings.Lines(logs.String()) {
		if strings.Contains(l, "ping before handing out a connection failed") {
			line = l
		}
	}
	if !strings.Contains(line, `"level":"WARN"`) || !strings.Contains(line, `"pool":"pinged"`) {
		t.Errorf("the failed ping's log line %q: want a Warn with the pool's name; the log:\n%s", line, logs.String())
	}
}
