package shoalhttp

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/syncbuf"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Pools with no Logger log to slog.Default(); the tests fail dials on
	// purpose, so their default says nothing (convention_test.go sets its
	// own to see what a Transport says).
	slog.SetDefault(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m)
}

// requireService returns the URL of a real server named by env. When env is
// unset the test skips, unless SHOAL_REQUIRE_SERVICES=1 (as in CI), where a
// missing or unreachable server fails it.
func requireService(t *testing.T, env string) string {
	t.Helper()
	required := os.Getenv("SHOAL_REQUIRE_SERVICES") == "1"
	raw := os.Getenv(env)
	if raw == "" {
		if required {
			t.Fatalf("%s is not set and SHOAL_REQUIRE_SERVICES=1", env)
		}
		t.Skipf("%s is not set", env)
	}
	key, err := parseOrigin(raw)
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	c, err := net.DialTimeout("tcp", key.addr(), 5*time.Second)
	if err != nil {
		if required {
			t.Fatalf("%s (%s) is unreachable: %v", env, key.addr(), err)
		}
		t.Skipf("%s (%s) is unreachable: %v", env, key.addr(), err)
	}
	c.Close()
	return raw
}

// newTestTransport returns a Transport closed (and checked to close) at
// the end of the test.
func newTestTransport(t *testing.T, opts Options) *Transport {
	t.Helper()
	tr, err := NewTransport(opts)
	if err != nil {
		t.Fatalf("NewTransport: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := tr.Close(ctx); err != nil {
			t.Errorf("Transport.Close: %v", err)
		}
	})
	return tr
}

// connCounter counts the connections a test server accepted.
type connCounter struct{ n atomic.Int64 }

func (c *connCounter) hook(_ net.Conn, st http.ConnState) {
	if st == http.StateNew {
		c.n.Add(1)
	}
}

// newH1Server starts a plain HTTP/1.1 test server that counts connections.
func newH1Server(t testing.TB, h http.Handler) (*httptest.Server, *connCounter) {
	t.Helper()
	cc := &connCounter{}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = cc.hook
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, cc
}

// newH2TLSServer starts a TLS test server speaking HTTP/2 (and HTTP/1.1)
// with the given stream limit, and returns a TLS config that trusts it.
func newH2TLSServer(t *testing.T, h http.Handler, maxStreams int) (*httptest.Server, *connCounter, *tls.Config) {
	t.Helper()
	cc := &connCounter{}
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: maxStreams}
	srv.Config.ConnState = cc.hook
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tlsCfg := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	return srv, cc, tlsCfg
}

// get sends a GET through tr and returns the status and the body read to
// the end.
func get(t *testing.T, tr http.RoundTripper, url string) (int, string) {
	t.Helper()
	resp, err := (&http.Client{Transport: tr}).Get(url)
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return resp.StatusCode, string(b)
}

// onlyStats returns the Stats of the transport's single origin.
func onlyStats(t *testing.T, tr *Transport) (string, shoal.Stats) {
	t.Helper()
	all := tr.Stats()
	if len(all) != 1 {
		t.Fatalf("Stats has %d origins, want 1: %v", len(all), all)
	}
	for k, v := range all {
		return k, v
	}
	panic("unreachable")
}

// eventually polls cond until it holds, failing the test after a bounded
// number of tries. It waits for background work (a close after a GOAWAY),
// never to assert how fast something is.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 500 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("gave up waiting for: %s", what)
}

// newTestLogger logs at Debug level into b.
func newTestLogger(b *syncbuf.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newTLSServer starts a TLS test server running h that offers HTTP/2 by
// ALPN when h2 is set and HTTP/1.1 only otherwise, and returns a TLS
// config that trusts it.
func newTLSServer(t *testing.T, h http.Handler, h2 bool) (*httptest.Server, *connCounter, *tls.Config) {
	t.Helper()
	if h2 {
		return newH2TLSServer(t, h, 0)
	}
	cc := &connCounter{}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = cc.hook
	srv.Config.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){} // no h2
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, cc, srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
}

// refusedAddr returns a loopback address where nothing listens, so that
// every dial to it is refused at once.
func refusedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
