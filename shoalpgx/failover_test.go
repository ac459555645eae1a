package shoalpgx

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgpair"
)

// silentPrimary returns the pair, promoted, and the read-write multi-host
// string whose first host is a proxy in front of the old primary that has
// gone silent: a dial that tries the hosts in order meets a host that
// accepts and never answers before one that would serve it.
func silentPrimary(t *testing.T) (*pgpair.Pair, string) {
	t.Helper()
	pair := pgpair.ForTest(t)
	proxy, err := pgpair.NewProxy(pair.Primary.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	cs, err := pgpair.ReplaceHost(pair.HA, pair.Primary.Addr, proxy.Addr())
	if err != nil {
		t.Fatal(err)
	}
	proxy.Silence()
	if err := pair.Promote(context.Background(), pair.Standby); err != nil {
		t.Fatal(err)
	}
	return pair, cs
}

// A dial whose first host is silent gives up on it after
// HostConnectTimeout and reaches the promoted standby, so a caller with 5s
// writes; with only the connect timeout (2 minutes by default) the dial
// would still be waiting on the first host when the caller's deadline
// passed.
func TestFailoverDialPassesSilentHost(t *testing.T) {
	pair, cs := silentPrimary(t)
	pool, err := New(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var port int
	if err := pool.QueryRow(ctx, "SELECT inet_server_port()").Scan(&port); err != nil {
		t.Fatalf("a query with 5s, the first host silent and the second promoted: %v", err)
	}
	if strconv.Itoa(port) != pair.Standby.Port {
		t.Fatalf("the query ran on port %d, want the promoted standby's %s", port, pair.Standby.Port)
	}
}
