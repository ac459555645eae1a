package shoalhttp

import (
	"net/http"
	"sync"
	"testing"
)

// TestTransportSetMaxConnsRacingCallsAgree: SetMaxConns calls for one
// origin racing each other leave its pool at the limit the origin keeps
// for its later pools, whichever call takes effect last: the pool never
// enforces one call's limit while the origin holds another's. Four calls
// a round, since the race is short.
func TestTransportSetMaxConnsRacingCallsAgree(t *testing.T) {
	srv, _ := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tr := newTestTransport(t, Options{MaxConns: 8})
	get(t, tr, srv.URL+"/")
	const rounds = 5000
	for round := range rounds {
		start := make(chan struct{})
		var wg sync.WaitGroup
		for _, n := range []int{2, 3, 4, 5} {
			wg.Go(func() {
				<-start
				if err := tr.SetMaxConns(srv.URL, n); err != nil {
					t.Error(err)
				}
			})
		}
		close(start)
		wg.Wait()
		pool := tr.Stats()[srv.URL].MaxConns
		if kept := storedLimit(t, tr, srv.URL); pool != kept {
			t.Fatalf("round %d of %d: the pool enforces MaxConns %d, the origin keeps %d for its later pools", round, rounds, pool, kept)
		}
	}
}

// storedLimit returns the limit tr keeps for the origin named url, which
// its pools made later (after CloseIdleConnections) take.
func storedLimit(t *testing.T, tr *Transport, url string) int {
	t.Helper()
	key, err := parseOrigin(url)
	if err != nil {
		t.Fatal(err)
	}
	tr.mu.RLock()
	defer tr.mu.RUnlock()
	canon := hostKey{scheme: key.scheme, host: key.addr(), proxy: key.proxy.id(), h1only: key.h1only}
	o := tr.origins[canon]
	if o == nil {
		t.Fatalf("no origin for %s", url)
	}
	if n, on := int(tr.limits[canon]), int(o.maxConns.Load()); n != on {
		t.Fatalf("the Transport keeps %d for %s, its origin %d", n, url, on)
	}
	return int(o.maxConns.Load())
}
