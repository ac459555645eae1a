package shoalpgx

import (
	"net"
	"strconv"
	"testing"

	"github.com/shoalpool/shoal/internal/pgpair"
)

// proxiedConfig is testConfig with the connections going through a new
// pgpair.Proxy in front of the test server, closed at cleanup. A test whose
// pool's cleanup checks for leaked goroutines, or waits for connections the
// proxy may hold, closes the proxy first: it opens the pool after this,
// then registers closeProxy, whose cleanup runs before the pool's.
func proxiedConfig(t *testing.T, mutate func(*Config)) (*Config, *pgpair.Proxy) {
	t.Helper()
	cfg := testConfig(t, mutate)
	px, err := pgpair.NewProxy(hostAddr(cfg.ConnConfig))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeProxy(px))
	host, port, _ := net.SplitHostPort(px.Addr())
	n, _ := strconv.Atoi(port)
	cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(n)
	cfg.ConnConfig.Fallbacks = nil
	return cfg, px
}

// closeProxy is px's Close as a cleanup.
func closeProxy(px *pgpair.Proxy) func() {
	return func() { px.Close() }
}
