package shoalhttp

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestCloseIdleConnectionsForgetsTheProtocol: an https origin's protocol,
// learned from its first connection's ALPN, holds until
// CloseIdleConnections: a server that has stopped offering HTTP/2 is then
// reached over HTTP/1.1, learned afresh.
func TestCloseIdleConnectionsForgetsTheProtocol(t *testing.T) {
	var h1only atomic.Bool
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		if !h1only.Load() {
			return nil, nil // the server's own config, offering h2
		}
		return &tls.Config{Certificates: srv.TLS.Certificates, NextProtos: []string{"http/1.1"}}, nil
	}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tr := newTestTransport(t, Options{TLSClientConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()})

	if code, proto := get(t, tr, srv.URL); code != http.StatusOK || proto != "HTTP/2.0" {
		t.Fatalf("first GET: %d over %q, want 200 over HTTP/2.0", code, proto)
	}
	h1only.Store(true)
	tr.CloseIdleConnections()
	if code, proto := get(t, tr, srv.URL); code != http.StatusOK || proto != "HTTP/1.1" {
		t.Fatalf("GET after CloseIdleConnections, the server offering HTTP/1.1 only: %d over %q, want 200 over HTTP/1.1", code, proto)
	}
}
