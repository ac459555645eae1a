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

// With the defaults, a silent first host costs a dial a quarter of a
// second, not its connect timeout: the next host is tried as well once the
// first has had 250ms (docs/operating.md, "Failover and the read pool").
// HostConnectTimeout is an hour here, so only the stagger can pass the
// silent host by.
func TestSilentHostCostsADialAQuarterSecond(t *testing.T) {
	silent := hostProxy(t)
	silent.Silence()
	p := hostsPool(t, "", 0, func(c *Config) { c.HostConnectTimeout = time.Hour }, silent.Addr(), testServerAddr(t))
	start := time.Now()
	if err := p.Ping(dialCtx(t)); err != nil {
		t.Fatalf("with the first host silent: %v", err)
	}
	// The upper bound leaves the connect and the ping most of a second on
	// a loaded machine.
	if took := time.Since(start); took < 250*time.Millisecond || took > 950*time.Millisecond {
		t.Errorf("the dial past a silent host took %s, want 250ms and a connect", took.Round(time.Millisecond))
	}
}
