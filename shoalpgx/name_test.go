package shoalpgx

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/syncbuf"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// pool_name names the pool and is not sent to the server; without it the
// pool is named after its host and database. Either way the read pool is
// named apart, and both names reach the core pools: their Stats, their
// log lines, their errors, a password in the name masked in all.
func TestPoolName(t *testing.T) {
	cfg, err := ParseConfig(testBase + "&pool_name=orders")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "orders" {
		t.Errorf("pool_name=orders: Name %q", cfg.Name)
	}
	if _, sent := cfg.ConnConfig.RuntimeParams["pool_name"]; sent {
		t.Error("pool_name is left in the run-time parameters sent to the server")
	}
	if s := cfg.String(); !strings.Contains(s, "pool_name=orders") {
		t.Errorf("String() %q leaves out the name", s)
	}

	for _, c := range []struct {
		name, want, reads string
	}{
		{"orders", "orders", "orders/reads"},
		{"", "127.0.0.1:5432/shoal_test", "127.0.0.1:5432/shoal_test/reads"},
		// Named after a connection string: the password masked, as the
		// core masks it, in every name, error and line. A bare password=
		// value runs to a space, so the read pool's suffix goes after one
		// rather than into the masked value.
		{"orders password=hunter2", "orders password=xxxxx", "orders password=xxxxx /reads"},
	} {
		var logs syncbuf.Buffer
		p := newTestPool(t, func(cfg *Config) {
			cfg.Name, cfg.MaxConns = c.name, 1
			cfg.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		})
		if got := p.Config().Name; got != c.want {
			t.Errorf("Name %q: the pool's Config().Name is %q, want %q", c.name, got, c.want)
		}
		ctx := pgtest.Ctx(t)
		for pool, want := range map[interface {
			Ping(context.Context) error
			Stat() *Stat
		}]string{p: c.want, p.Reads(): c.reads} {
			if err := pool.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			if got := pool.Stat().Shoal().Name; got != want {
				t.Errorf("Name %q: the core pool is named %q, want %q", c.name, got, want)
			}
			// The core's Debug line of the dial the ping made.
			if line := fmt.Sprintf(`"pool":%q`, want); !strings.Contains(logs.String(), line) {
				t.Errorf("Name %q: no log line with %s in:\n%s", c.name, line, logs.String())
			}
		}
		// An acquire that times out on the full pool names it.
		held, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		_, err = p.Acquire(short)
		cancel()
		held.Release()
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", c.want)) {
			t.Errorf("Name %q: an acquire past its deadline on the full pool: %v, want an error naming the pool", c.name, err)
		}
	}
}

// Several hosts name the default after all of them.
func TestPoolNameSeveralHosts(t *testing.T) {
	cfg, err := ParseConfig("postgres://app:pw@db1.internal:5432,db2.internal:5433/app")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := defaultName(cfg.ConnConfig), "db1.internal:5432,db2.internal:5433/app"; got != want {
		t.Errorf("defaultName %q, want %q", got, want)
	}
}

// The shared connections' pool keeps its suffix after a name that ends in
// a password, as the read pool does, so that the two pools' metrics and
// logs stay apart.
func TestPipelinedPoolNameAfterAPassword(t *testing.T) {
	p := newPipelinedPool(t, 2, 2, func(c *Config) { c.Name = "orders password=hunter2" })
	if err := p.Ping(pgtest.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	whole, shared := p.Stat().Shoal().Name, p.Stat().Pipelined().Name
	if want := "orders password=xxxxx /pipelined"; shared != want || whole == shared {
		t.Errorf("the pools are named %q and %q, want %q for the shared connections'", whole, shared, want)
	}
}
