package shoalhttp

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// TestHTTP2ThousandSlowRequestsOverManyConnections: a server capped at 100
// streams per connection gets 1,000 concurrent slow requests; all must be
// answered, spread over at least 10 connections.
func TestHTTP2ThousandSlowRequestsOverManyConnections(t *testing.T) {
	const requests = 1000
	var inFlight, peak atomic.Int64
	allIn := make(chan struct{})
	srv, conns, tlsCfg := newH2TLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			http.Error(w, "want HTTP/2, got "+r.Proto, http.StatusHTTPVersionNotSupported)
			return
		}
		// Slow: every request is held until all 1,000 are in flight at
		// the server (or a generous bound passes), which takes 10
		// connections of 100 streams.
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if n == requests {
			close(allIn)
		}
		select {
		case <-allIn:
		case <-time.After(20 * time.Second):
		}
		io.WriteString(w, "ok")
	}), 100)
	var connected atomic.Int64
	tr := newTestTransport(t, Options{
		TLSClientConfig: tlsCfg,
		OnConnect: func(info ConnInfo) {
			if info.Protocol == protoHTTP2 && info.TLS != nil && info.TLS.NegotiatedProtocol == "h2" {
				connected.Add(1)
			}
		},
	})
	client := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr atomic.Value
	for range requests {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			resp, err := client.Do(req)
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || string(b) != "ok" {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, resp.Status+" "+string(b))
			}
		})
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d of %d requests failed; first: %v", failed.Load(), requests, firstErr.Load())
	}
	if n := conns.n.Load(); n < 10 {
		t.Errorf("server saw %d connections, want at least 10 (100 streams each)", n)
	}
	if n := connected.Load(); n < 10 {
		t.Errorf("OnConnect saw %d HTTP/2 connections, want at least 10", n)
	}
	_, st := onlyStats(t, tr)
	if st.TotalConns > defaultMaxConns || st.Leases != 0 {
		t.Errorf("stats: %+v", st)
	}
	if p := peak.Load(); p != requests {
		t.Errorf("peak requests in flight at the server: %d, want %d", p, requests)
	}
	t.Logf("connections: %d", conns.n.Load())
}

// TestHTTP2StreamLimitFromSettings: the pool learns the server's stream
// limit before it hands out the first stream.
func TestHTTP2StreamLimitFromSettings(t *testing.T) {
	release := make(chan struct{})
	srv, conns, tlsCfg := newH2TLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}), 3)
	tr := newTestTransport(t, Options{TLSClientConfig: tlsCfg})
	var wg sync.WaitGroup
	for range 7 {
		wg.Go(func() {
			if code, _ := get(t, tr, srv.URL); code != 200 {
				t.Errorf("status %d", code)
			}
		})
	}
	eventually(t, "7 requests in flight", func() bool {
		st := tr.Stats()
		for _, s := range st {
			return s.Leases == 7
		}
		return false
	})
	close(release)
	wg.Wait()
	if n := conns.n.Load(); n != 3 {
		t.Errorf("7 requests at 3 streams per connection used %d connections, want 3", n)
	}
}

// TestHTTP2LaterConnectionAnnouncingFewerStreams: a connection whose server
// announces fewer streams than the origin's first one did carries no more
// than that many at once, from its first request (doc.go: it is lowered to
// it), so the requests beyond go to the connection with room rather than
// wait inside the full one. Here the first connection takes 4 streams and
// the second 1: five requests all reach the server.
func TestHTTP2LaterConnectionAnnouncingFewerStreams(t *testing.T) {
	release := make(chan struct{})
	var reached atomic.Int64
	srv := startH2CLimited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}), func(i int) uint32 {
		if i == 0 {
			return 4
		}
		return 1
	})
	tr := newTestTransport(t, Options{H2CPriorKnowledge: true, MinConns: 2, MaxConns: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Warm(ctx, srv.url()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(release)
	for range 5 {
		wg.Go(func() {
			if code, _ := get(t, tr, srv.url()); code != 200 {
				t.Errorf("status %d", code)
			}
		})
	}
	eventually(t, "5 requests at the server, 4 on the first connection and 1 on the second", func() bool { return reached.Load() == 5 })
}

// TestHTTP2GoAwayRetiresConnection: after a GOAWAY the in-flight request
// finishes, new requests go to a new connection, and the old connection
// closes once drained. The server is h2c, reached by prior knowledge.
func TestHTTP2GoAwayRetiresConnection(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			started <- struct{}{}
			<-release
		}
		io.WriteString(w, r.Proto)
	})
	srv := startH2C(t, handler)
	var retired atomic.Int64
	tr := newTestTransport(t, Options{
		H2CPriorKnowledge: true,
		MinConns:          -1, // one connection, so that the server's count says where requests went
		OnDisconnect: func(_ ConnInfo, r shoal.Reason) {
			if r == shoal.ReasonRejected || r == shoal.ReasonRetired || r == shoal.ReasonDiscarded {
				retired.Add(1)
			}
		},
	})
	url := srv.url()
	if _, body := get(t, tr, url+"/"); body != "HTTP/2.0" {
		t.Fatalf("first request over %q, want HTTP/2.0", body)
	}

	slow := make(chan string, 1)
	go func() {
		resp, err := (&http.Client{Transport: tr}).Get(url + "/slow")
		if err != nil {
			slow <- "error: " + err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		slow <- string(b)
	}()
	<-started
	// Shutdown of the base server sends GOAWAY on every HTTP/2 connection
	// and returns (it serves none itself); the listener stays open.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.base.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// Requests after the GOAWAY all succeed, and once the client has read
	// it (the server sends it from a goroutine of its own, so that takes a
	// moment) they go to a new connection. One that raced the GOAWAY onto
	// the old connection is either served there or refused and retried.
	for i := 0; srv.accepted() < 2; i++ {
		if i == 500 {
			t.Fatal("no request went to a new connection after the GOAWAY")
		}
		if code, _ := get(t, tr, url+"/"); code != 200 {
			t.Fatalf("request after GOAWAY: status %d", code)
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	if got := <-slow; got != "HTTP/2.0" {
		t.Fatalf("in-flight request across the GOAWAY: %q", got)
	}
	if n := srv.accepted(); n != 2 {
		t.Errorf("server accepted %d connections, want 2", n)
	}
	eventually(t, "the GOAWAY'd connection to close", func() bool {
		_, st := onlyStats(t, tr)
		return retired.Load() == 1 && st.TotalConns == 1
	})
}

// TestHTTPSFallsBackToHTTP1: a TLS server without h2 gets HTTP/1.1, learned
// from ALPN on the first connection.
func TestHTTPSFallsBackToHTTP1(t *testing.T) {
	cc := &connCounter{}
	s := newTLSOnlyHTTP1(t, cc)
	tlsCfg := s.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tr := newTestTransport(t, Options{TLSClientConfig: tlsCfg})
	for range 5 {
		if _, body := get(t, tr, s.URL); body != "HTTP/1.1" {
			t.Fatalf("got %q, want HTTP/1.1", body)
		}
	}
	if n := cc.n.Load(); n != 1 {
		t.Errorf("server saw %d connections, want 1", n)
	}
	// DisableHTTP2 against an HTTP/2 server stays on HTTP/1.1.
	h2srv, _, h2cfg := newH2TLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	}), 100)
	tr1 := newTestTransport(t, Options{TLSClientConfig: h2cfg, DisableHTTP2: true})
	if _, body := get(t, tr1, h2srv.URL); body != "HTTP/1.1" {
		t.Errorf("DisableHTTP2: got %q", body)
	}
}

// newTLSOnlyHTTP1 starts a TLS server that offers no HTTP/2.
func newTLSOnlyHTTP1(t *testing.T, cc *connCounter) *httptest.Server {
	t.Helper()
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	}))
	s.Config.ConnState = cc.hook
	s.Config.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){} // no h2
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// TestHTTP2BodilessResponsesFreeTheirStream: the answer to a HEAD, a 204
// and a 304 frees its stream slot at once, as HTTP/1.1 frees its
// connection, even when the caller never closes the empty body.
func TestHTTP2BodilessResponsesFreeTheirStream(t *testing.T) {
	srv, _, tlsCfg := newH2TLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/204":
			w.WriteHeader(http.StatusNoContent)
		case "/304":
			w.WriteHeader(http.StatusNotModified)
		}
	}), 2)
	tr := newTestTransport(t, Options{TLSClientConfig: tlsCfg, MaxConns: 1, MinConns: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i, tc := range []struct{ method, path string }{
		{http.MethodHead, "/"}, {http.MethodGet, "/204"}, {http.MethodGet, "/304"},
		{http.MethodHead, "/"}, {http.MethodGet, "/204"}, {http.MethodGet, "/304"},
	} {
		req, _ := http.NewRequestWithContext(ctx, tc.method, srv.URL+tc.path, nil)
		resp, err := tr.RoundTrip(req) // the body is never closed
		if err != nil {
			t.Fatalf("request %d (%s %s) on a connection of 2 streams: %v", i, tc.method, tc.path, err)
		}
		if resp.ProtoMajor != 2 {
			t.Fatalf("response over %s, want HTTP/2", resp.Proto)
		}
	}
	if _, st := onlyStats(t, tr); st.Leases != 0 {
		t.Errorf("Stats().Leases = %d after bodiless responses, want 0", st.Leases)
	}
}
