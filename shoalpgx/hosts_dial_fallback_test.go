package shoalpgx

import (
	"context"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// A pool whose target falls back to the primary (prefer-standby, the read
// pool) while its only standby is silent (crashed, partitioned) waits out
// the standby's HostConnectTimeout once; after that, the standby having
// failed its last dial, a dial takes the primary once the silent host has
// had its stagger, as a dial passes a silent host for one that qualifies,
// rather than make every new connection pay HostConnectTimeout.
func TestFallbackDialPassesASilentStandby(t *testing.T) {
	const hostTimeout = 2 * time.Second
	for _, tc := range []struct {
		name, extra string
		acquire     func(p *Pool, ctx context.Context) (*Conn, error)
	}{
		{"prefer-standby", "&target_session_attrs=prefer-standby", func(p *Pool, ctx context.Context) (*Conn, error) { return p.Acquire(ctx) }},
		{"reads", "", func(p *Pool, ctx context.Context) (*Conn, error) { return p.Reads().Acquire(ctx) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			silent := hostProxy(t)
			silent.Silence()
			p := hostsPool(t, tc.extra, 0, func(c *Config) { c.HostConnectTimeout = hostTimeout }, testServerAddr(t), silent.Addr())
			c1, err := tc.acquire(p, dialCtx(t))
			if err != nil {
				t.Fatalf("with the standby silent and the primary up: %v", err)
			}
			defer c1.Release()
			// The second connection is a dial of its own, which knows
			// that the standby's last one failed.
			ctx, cancel := context.WithTimeout(pgtest.Ctx(t), hostTimeout*3/4)
			defer cancel()
			c2, err := tc.acquire(p, ctx)
			if err != nil {
				t.Fatalf("a second dial with the standby silent, known to have failed: %v", err)
			}
			defer c2.Release()
		})
	}
}
