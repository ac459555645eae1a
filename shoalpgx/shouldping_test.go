package shoalpgx

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// lastWasPing reports whether the last statement the backend pid ran was pgx's
// ping ("-- ping"), as pg_stat_activity shows it.
func lastWasPing(t *testing.T, admin *pgx.Conn, pid uint32) bool {
	t.Helper()
	var query string
	if err := admin.QueryRow(pgtest.Ctx(t), "select query from pg_stat_activity where pid = $1", pid).Scan(&query); err != nil {
		t.Fatal(err)
	}
	return query == "-- ping"
}

// acquireAfterMarker runs a marker statement on p's connection, releases it,
// waits idle, then acquires it again and reports whether that acquire
// pinged it.
func acquireAfterMarker(t *testing.T, p *Pool, admin *pgx.Conn, idle time.Duration) bool {
	t.Helper()
	ctx := pgtest.Ctx(t)
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid := backendPID(t, c)
	if _, err := c.Exec(ctx, "select 'marker'"); err != nil {
		t.Fatal(err)
	}
	c.Release()
	time.Sleep(idle)
	c, err = p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if got := backendPID(t, c); got != pid {
		t.Fatalf("acquire got backend %d, want the idle one %d", got, pid)
	}
	return lastWasPing(t, admin, pid)
}

// Whether an acquire pings is ShouldPing's call when it is set, and by
// default whether the connection sat idle longer than HealthCheckAfter.
func TestShouldPingDecidesThePing(t *testing.T) {
	admin := pgtest.AdminConn(t)
	for _, tc := range []struct {
		name       string
		after      time.Duration
		shouldPing func(context.Context, ShouldPingParams) bool
		idle       time.Duration
		want       bool
	}{
		{"default, idle past HealthCheckAfter", 5 * time.Millisecond, nil, 30 * time.Millisecond, true},
		{"default, idle within HealthCheckAfter", time.Hour, nil, 30 * time.Millisecond, false},
		{"ShouldPing false, idle past HealthCheckAfter", 5 * time.Millisecond,
			func(context.Context, ShouldPingParams) bool { return false }, 30 * time.Millisecond, false},
		{"ShouldPing true, barely idle", time.Hour,
			func(context.Context, ShouldPingParams) bool { return true }, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPool(t, func(c *Config) {
				c.MaxConns = 1
				c.HealthCheckAfter = tc.after
				c.ShouldPing = tc.shouldPing
			})
			if got := acquireAfterMarker(t, p, admin, tc.idle); got != tc.want {
				t.Fatalf("pinged %v, want %v", got, tc.want)
			}
		})
	}
}

// ShouldPing is asked on every acquire, with the connection about to be
// handed out and how long it sat idle.
func TestShouldPingIsToldTheIdleDuration(t *testing.T) {
	var mu sync.Mutex
	var asked []ShouldPingParams
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 1
		c.ShouldPing = func(_ context.Context, params ShouldPingParams) bool {
			mu.Lock()
			asked = append(asked, params)
			mu.Unlock()
			return false
		}
	})
	ctx := pgtest.Ctx(t)
	const idle = 30 * time.Millisecond
	var conns []*pgx.Conn
	for range 2 {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c.Conn())
		c.Release()
		time.Sleep(idle)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 {
		t.Fatalf("ShouldPing asked %d times in 2 acquires", len(asked))
	}
	for i, params := range asked {
		if params.Conn != conns[i] {
			t.Errorf("acquire %d: ShouldPing was shown another connection than the one handed out", i)
		}
	}
	if d := asked[0].IdleDuration; d >= idle {
		t.Errorf("first acquire, of a new connection: IdleDuration %s, want less than %s", d, idle)
	}
	if d := asked[1].IdleDuration; d < idle || d > time.Minute {
		t.Errorf("second acquire: IdleDuration %s, want at least the %s it sat idle", d, idle)
	}
}

// A ShouldPing that asks for a ping finds a connection the server killed
// even with the look at the socket off (HealthCheckAfter 0): the ping fails
// and the acquire goes on with a new connection, so the query succeeds.
func TestShouldPingReplacesADeadConnection(t *testing.T) {
	closes := &closeReasons{}
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 1
		c.HealthCheckAfter = 0
		c.ShouldPing = func(context.Context, ShouldPingParams) bool { return true }
		c.Observer = closes
	})
	ctx := pgtest.Ctx(t)
	old := terminateIdle(t, p)
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if pid := backendPID(t, c); pid == old {
		t.Fatalf("acquire handed out the terminated backend %d", pid)
	}
	var one int
	if err := c.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("query after the ping replaced the dead connection: %d, %v", one, err)
	}
	pgtest.Settle(t, shoalStats(p))
	if got := closes.list(); len(got) != 1 || got[0] != shoal.ReasonHealth {
		t.Fatalf("closes reported as %v, want the one failed ping as %v", got, shoal.ReasonHealth)
	}
}

// closeReasons records the reasons the core gives for its closes.
type closeReasons struct {
	shoal.BaseObserver
	mu      sync.Mutex
	reasons []shoal.Reason
}

func (o *closeReasons) ObserveClose(r shoal.Reason) {
	o.mu.Lock()
	o.reasons = append(o.reasons, r)
	o.mu.Unlock()
}

func (o *closeReasons) list() []shoal.Reason {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]shoal.Reason(nil), o.reasons...)
}
