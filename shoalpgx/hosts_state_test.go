package shoalpgx

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// A connection counts in its host's Open while the pool has it, and stops
// counting when it closes or is hijacked.
func TestHostsOpenFollowsConnections(t *testing.T) {
	pool := newTestPool(t, nil)
	ctx := pgtest.Ctx(t)
	a, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	open := func() int {
		hosts := pool.Hosts()
		if len(hosts) != 1 {
			t.Fatalf("hosts %+v, want the one of the connection string", hosts)
		}
		return hosts[0].Open
	}
	if got := open(); got != 2 {
		t.Fatalf("Open %d with two connections, want 2", got)
	}
	conn := a.Hijack()
	defer conn.Close(context.Background())
	if got := open(); got != 1 {
		t.Fatalf("Open %d after a hijack, want 1", got)
	}
	b.Release()
	pool.Reset()
	// The close runs in the background; the count drops when it ends.
	eventually(t, 5*time.Second, "Open 0 after Reset closed the idle connection", func() bool { return open() == 0 })
}

// A panic in a connect hook that pgx runs (here DialFunc) during a dial
// over several hosts, in a goroutine of the pool's own, fails the dial
// with an error that says so instead of ending the program.
func TestHostDialHookPanic(t *testing.T) {
	cfg := testConfig(t, nil)
	cc := cfg.ConnConfig
	cfg2, err := ParseConfig(strings.Replace(pgtest.ConnString(t), "@127.0.0.1:5432/", "@127.0.0.1:5432,127.0.0.2:5432/", 1))
	if err != nil {
		t.Fatal(err)
	}
	if !severalHosts(cfg2.ConnConfig) {
		t.Fatalf("the string %s does not name two hosts", cfg2)
	}
	cfg2.ConnConfig.RuntimeParams = cc.RuntimeParams
	cfg2.ConnConfig.DialFunc = func(context.Context, string, string) (net.Conn, error) { panic("dial hook") }
	pool := newPoolFor(t, cfg2)
	err = pool.Ping(pgtest.Ctx(t))
	if err == nil || !strings.Contains(err.Error(), "a connect hook panicked") || !strings.Contains(err.Error(), "dial hook") {
		t.Fatalf("a ping through a panicking DialFunc: %v", err)
	}
}
