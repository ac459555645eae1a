package shoalhttp

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/peek"
)

// TestWarmConnectionClosedByServerIsNotUsed: a connection opened ahead of
// any request (Warm, MinIdle) sits idle like any other, and a server's
// idle or header timeout closes it all the same; it must not be handed
// out dead, where the request would fail on it and, the connection never
// having carried a request, not be retried.
func TestWarmConnectionClosedByServerIsNotUsed(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			srv := startRawServer(t, hangUpFirst())
			tr, dialled := newDialRecordingTransport(t)
			if err := tr.Warm(context.Background(), srv.url()); err != nil {
				t.Fatalf("Warm: %v", err)
			}
			var p peek.Peeker
			p.Init(dialled(0))
			eventually(t, "the server's close of the warmed connection to arrive", func() bool {
				res, _ := p.Peek()
				return res == peek.Closed
			})
			// A GET the retry rule could replay, were the connection not
			// fresh; a POST only a live connection can serve.
			var body io.Reader
			if method == http.MethodPost {
				body = io.NopCloser(strings.NewReader("not replayable"))
			}
			req, _ := http.NewRequest(method, srv.url(), body)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatalf("%s after the server closed the warmed connection: %v", method, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
}

// hangUpFirst serves HTTP/1.1 requests on every connection but the first,
// which it closes unused, as a server's idle or header timeout would.
func hangUpFirst() func(net.Conn, *bufio.Reader) {
	var mu sync.Mutex
	first := true
	return func(c net.Conn, br *bufio.Reader) {
		mu.Lock()
		hangUp := first
		first = false
		mu.Unlock()
		if hangUp {
			return
		}
		for readRequest(br) {
			io.WriteString(c, okResponse)
		}
	}
}

// newDialRecordingTransport returns a Transport and a function that
// returns the i-th connection it dialled.
func newDialRecordingTransport(t *testing.T) (*Transport, func(i int) net.Conn) {
	var mu sync.Mutex
	var dialled []net.Conn
	tr := newTestTransport(t, Options{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			dialled = append(dialled, nc)
			mu.Unlock()
		}
		return nc, err
	}})
	return tr, func(i int) net.Conn {
		mu.Lock()
		defer mu.Unlock()
		return dialled[i]
	}
}

// TestWarmTLSConnectionClosedByServerIsNotUsed: over TLS a server's
// goodbye is a close_notify record, which a warmed connection's check must
// read as it does on a connection that carried requests.
func TestWarmTLSConnectionClosedByServerIsNotUsed(t *testing.T) {
	closed := make(chan struct{}, 8)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	}))
	srv.Config.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){} // HTTP/1.1 only
	// A connection that sends no request within this is closed, as a
	// server's header timeout closes a warmed connection left idle.
	srv.Config.ReadHeaderTimeout = 300 * time.Millisecond
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tr := newTestTransport(t, Options{TLSClientConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()})
	if err := tr.Warm(context.Background(), srv.URL); err != nil {
		t.Fatalf("Warm: %v", err)
	}
	warmed := time.Now()
	<-closed
	eventually(t, "the warmed connection to be no longer just dialled", func() bool {
		return time.Since(warmed) > freshTLSConnTrust
	})
	req, _ := http.NewRequest(http.MethodPost, srv.URL, io.NopCloser(strings.NewReader("not replayable")))
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatalf("POST after the server closed the warmed connection: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
