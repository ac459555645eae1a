package stdlib_test

import (
	"net"
	"strconv"
	"testing"

	"github.com/shoalpool/shoal/internal/pgpair"
	"github.com/shoalpool/shoal/shoalpgx"
)

// proxyConfig points cfg's connections at a new pgpair.Proxy in front of
// the server cfg names, so that a test can hold what they send (a ping,
// with real sockets and real deadlines under pgx) or cut them. Close the
// proxy after the DB and before the pool: its goroutines are the test's,
// not the pool's.
func proxyConfig(t *testing.T, cfg *shoalpgx.Config) *pgpair.Proxy {
	t.Helper()
	px, err := pgpair.NewProxy(net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))))
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(px.Addr())
	n, _ := strconv.Atoi(port)
	cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(n)
	cfg.ConnConfig.Fallbacks = nil
	return px
}
