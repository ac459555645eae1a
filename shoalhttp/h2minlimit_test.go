package shoalhttp

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// TestHTTP2MinConnsDefaultTakesTheOriginLimit: an origin whose limit
// SetMaxConns raised before its pool was made gets its pool with that
// limit, and so the HTTP/2 default of two connections, though
// Options.MaxConns is 1.
func TestHTTP2MinConnsDefaultTakesTheOriginLimit(t *testing.T) {
	srv, conns, tlsCfg := newH2TLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), 100)
	tr := newTestTransport(t, Options{MaxConns: 1, TLSClientConfig: tlsCfg})
	if err := tr.SetMaxConns(srv.URL, 4); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Warm(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	if _, st := onlyStats(t, tr); st.TotalConns != 2 || conns.n.Load() != 2 {
		t.Fatalf("MaxConns 1, SetMaxConns 4 before the first request, after Warm: %+v, server saw %d connections; want min(2, 4) = 2", st, conns.n.Load())
	}
}

// TestHTTP2WarmWithinTheOriginLimit: Warm opens the floor only up to the
// origin's limit, so an HTTP/2 origin held to one connection by
// SetMaxConns warms with that one instead of waiting for a second it may
// not open. The deadline is only the failure's bound.
func TestHTTP2WarmWithinTheOriginLimit(t *testing.T) {
	srv, _, tlsCfg := newH2TLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), 100)
	tr := newTestTransport(t, Options{TLSClientConfig: tlsCfg})
	if err := tr.SetMaxConns(srv.URL, 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Warm(ctx, srv.URL); err != nil {
		t.Fatalf("Warm with SetMaxConns 1: %v, want it done with one connection", err)
	}
	if _, st := onlyStats(t, tr); st.MaxConns != 1 {
		t.Fatalf("after Warm with SetMaxConns 1: %+v, want MaxConns 1", st)
	}
}
