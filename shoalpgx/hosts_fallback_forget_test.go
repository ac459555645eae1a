package shoalpgx

import (
	"sync"
	"testing"
)

// A shared connection's role look (pipeline_admit.go) may record it as a
// fallback while another statement's release closes it (forget): the
// two meet on other goroutines, and a look that lands after the close
// must not count the closed connection as a fallback one for good, which
// would have the pool probe for a standby forever.
func TestFallbackCountAfterForget(t *testing.T) {
	p := &Pool{}
	for range 200 {
		pc := &pooledConn{pool: p, host: &hostState{}}
		pc.host.open.Add(1)
		pc.setFallback(true)
		var wg sync.WaitGroup
		wg.Go(pc.forget)
		wg.Go(func() { pc.setFallback(true) })
		wg.Wait()
		pc.setFallback(true) // a look that came after the close
	}
	if n := p.fallbackOpen.Load(); n != 0 {
		t.Fatalf("with every connection closed, %d counted on a fallback host, want 0", n)
	}
}
