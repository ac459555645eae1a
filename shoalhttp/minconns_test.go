package shoalhttp

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestHTTP2SpreadsOverTwoConnections: with zero Options an HTTP/2 origin
// keeps two connections and concurrent requests land on both, though one
// connection's 100 streams would hold them all.
func TestHTTP2SpreadsOverTwoConnections(t *testing.T) {
	var mu sync.Mutex
	peers := map[string]int{}
	release := make(chan struct{})
	srv, conns, tlsCfg := newH2TLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		peers[r.RemoteAddr]++
		mu.Unlock()
		<-release
	}), 100)
	tr := newTestTransport(t, Options{TLSClientConfig: tlsCfg})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Warm(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	if _, st := onlyStats(t, tr); st.TotalConns != 2 {
		t.Fatalf("after Warm: %+v, want 2 connections", st)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if code, _ := get(t, tr, srv.URL); code != 200 {
				t.Errorf("status %d", code)
			}
		})
	}
	eventually(t, "4 requests in flight", func() bool { _, st := onlyStats(t, tr); return st.Leases == 4 })
	close(release)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(peers) != 2 || conns.n.Load() != 2 {
		t.Fatalf("4 requests went over %d connections (%v), server saw %d; want 2 each", len(peers), peers, conns.n.Load())
	}
	for addr, n := range peers {
		if n != 2 {
			t.Errorf("connection %s carried %d of the 4 requests, want 2 (least-loaded)", addr, n)
		}
	}
}

// TestMinConnsPerProtocol: a negative MinConns keeps one HTTP/2
// connection; an HTTP/1.1 origin keeps none by default and MinConns when
// set.
func TestMinConnsPerProtocol(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	srv, _, tlsCfg := newH2TLSServer(t, ok, 100)
	tr := newTestTransport(t, Options{TLSClientConfig: tlsCfg, MinConns: -1})
	if err := tr.Warm(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	get(t, tr, srv.URL)
	time.Sleep(20 * time.Millisecond) // room for a background dial that must not happen
	if _, st := onlyStats(t, tr); st.TotalConns != 1 {
		t.Errorf("HTTP/2 with MinConns -1: %+v, want 1 connection", st)
	}

	h1, h1conns := newH1Server(t, ok)
	tr1 := newTestTransport(t, Options{})
	get(t, tr1, h1.URL)
	time.Sleep(20 * time.Millisecond)
	if _, st := onlyStats(t, tr1); st.TotalConns != 1 || h1conns.n.Load() != 1 {
		t.Errorf("HTTP/1.1 with zero Options: %+v, server saw %d; want 1 connection", st, h1conns.n.Load())
	}
	tr3 := newTestTransport(t, Options{MinConns: 3})
	if err := tr3.Warm(ctx, h1.URL); err != nil {
		t.Fatal(err)
	}
	if _, st := onlyStats(t, tr3); st.TotalConns != 3 {
		t.Errorf("HTTP/1.1 with MinConns 3 after Warm: %+v, want 3 connections", st)
	}
}

// TestHTTP2MinIdleCountsAsMinConns: for an HTTP/2 origin MinIdle is a floor
// on open connections, as MinConns is (docs/settings.md), so MinIdle 4
// keeps four open where the default keeps two, and Warm waits for them.
func TestHTTP2MinIdleCountsAsMinConns(t *testing.T) {
	srv, conns, tlsCfg := newH2TLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), 100)
	tr := newTestTransport(t, Options{TLSClientConfig: tlsCfg, MinIdle: 4})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Warm(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	if _, st := onlyStats(t, tr); st.TotalConns != 4 || conns.n.Load() != 4 {
		t.Fatalf("after Warm with MinIdle 4: %+v, server saw %d connections; want 4", st, conns.n.Load())
	}
}
