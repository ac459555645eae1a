package shoalhttp

import (
	"context"
	"net/http"
	"testing"
	"time"
)

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
