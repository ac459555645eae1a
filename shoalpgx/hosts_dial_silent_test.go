package shoalpgx

import (
	"testing"
	"time"
)

// A host that accepts and never answers, passed over for the next one
// after its stagger, counts as a host whose dial failed: its LastError
// says so, and the next dial tries it last, so that after a failover that
// left the old primary silent (a crashed machine, a partition) only the
// first dial pays the stagger, as for a host that refuses. The stagger is
// a second here, far beyond a connect to the test server, so that the
// second dial never needs the silent host.
func TestDialTriesASilentHostLast(t *testing.T) {
	silent := hostProxy(t)
	silent.Silence()
	p := hostsPool(t, "", time.Second, func(c *Config) {
		c.MaxConns = 2
		c.HostConnectTimeout = time.Hour
	}, silent.Addr(), testServerAddr(t))
	triedOnlyFirst(t, dialCtx(t), p, silent, "never answered the first")
	if h := hostStat(t, p.Hosts(), silent.Addr()); h.LastError == "" {
		t.Errorf("%s: no LastError after it never answered a dial that another host won", h.Addr)
	}
}
