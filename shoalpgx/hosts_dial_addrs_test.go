package shoalpgx

import (
	"context"
	"strings"
	"testing"
	"time"
)

// HostConnectTimeout bounds a host, not each of its addresses: a name
// whose addresses are all silent (a crashed machine with an IPv4 and an
// IPv6 address, say) holds a dial for HostConnectTimeout, not for that
// times the number of its addresses, as pgx's per-address connect timeout
// would.
func TestHostConnectTimeoutBoundsAHostOfSeveralAddresses(t *testing.T) {
	const timeout = time.Second
	var silent []string
	for range 3 {
		s := hostProxy(t)
		s.Silence()
		silent = append(silent, s.Addr())
	}
	down := hostProxy(t)
	down.Refuse(true)
	p := hostsPool(t, "", time.Hour, func(c *Config) {
		c.HostConnectTimeout = timeout
		c.MinConns, c.MaxConns = 0, 1
		c.ConnConfig.LookupFunc = func(ctx context.Context, host string) ([]string, error) {
			if host == "silent.test" {
				return silent, nil // host:port, which pgconn dials as they are
			}
			return []string{host}, nil
		}
	}, "silent.test:5432", down.Addr())
	start := time.Now()
	err := p.Ping(dialCtx(t))
	took := time.Since(start)
	if err == nil {
		t.Fatal("a ping with one host silent and the other refusing succeeded")
	}
	if took >= 2*timeout {
		t.Fatalf("the dial took %s with HostConnectTimeout %s on a host of %d silent addresses: %v", took.Round(time.Millisecond), timeout, len(silent), err)
	}
	if h := hostStat(t, p.Hosts(), "silent.test:5432"); !strings.Contains(h.LastError, "timeout") {
		t.Errorf("%s: LastError %q, want its timeout", h.Addr, h.LastError)
	}
}
