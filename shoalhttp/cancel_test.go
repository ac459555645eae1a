package shoalhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCancelWhileWaitingForConnection: a request waiting for the only
// connection gives up with its context, and the pool is unharmed.
func TestCancelWhileWaitingForConnection(t *testing.T) {
	srv, _ := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "body")
	}))
	tr := newTestTransport(t, Options{MaxConns: 1})
	client := &http.Client{Transport: tr}
	held, err := client.Get(srv.URL) // holds the only connection until its body is closed
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	_, err = client.Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting request: %v, want a deadline error", err)
	}
	if !strings.Contains(err.Error(), "(waited ") {
		t.Errorf("error %q does not say what it waited for", err)
	}
	io.ReadAll(held.Body)
	held.Body.Close()
	if code, body := get(t, tr, srv.URL); code != 200 || body != "body" {
		t.Fatalf("after the cancelled wait: %d %q", code, body)
	}
	_, st := onlyStats(t, tr)
	if st.TotalConns != 1 || st.Leases != 0 || st.Waiting != 0 || st.CanceledAcquires != 1 {
		t.Errorf("stats: %+v", st)
	}
}

// TestCancelWhileWaitingForStream: over HTTP/2, a request waiting for a
// stream (one connection allowed, its one stream busy) gives up with its
// context, and neither the stream nor the connection is lost.
func TestCancelWhileWaitingForStream(t *testing.T) {
	release := make(chan struct{})
	srv, conns, cfg := newH2TLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			<-release
		}
		io.WriteString(w, "body")
	}), 1)
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	// Should the wait ignore its context, this frees it, and the check of
	// how long it took fails instead of the test hanging.
	time.AfterFunc(5*time.Second, unblock)
	tr := newTestTransport(t, Options{MaxConns: 1, TLSClientConfig: cfg})
	held := make(chan error, 1)
	go func() {
		code, _ := get(t, tr, srv.URL+"/hold")
		if code != 200 {
			held <- errors.New("held request failed")
			return
		}
		held <- nil
	}()
	eventually(t, "the held request on the only stream", func() bool {
		for _, s := range tr.Stats() {
			return s.Leases == 1
		}
		return false
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	start := time.Now()
	_, err := (&http.Client{Transport: tr}).Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting request: %v, want a deadline error", err)
	}
	if waited := time.Since(start); waited >= time.Second {
		t.Errorf("the waiting request returned %s after its 50ms deadline", waited)
	}
	unblock()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, tr, srv.URL); code != 200 || body != "body" {
		t.Fatalf("after the cancelled wait: %d %q", code, body)
	}
	_, st := onlyStats(t, tr)
	if st.TotalConns != 1 || st.Leases != 0 || st.Waiting != 0 || st.CanceledAcquires != 1 {
		t.Errorf("stats: %+v", st)
	}
	if n := conns.n.Load(); n != 1 {
		t.Errorf("%d connections to the server, want 1", n)
	}
}

// TestCancelInFlight: cancelling a request whose response has not come
// ends it at once and closes (not leaks) its connection, over HTTP/1.1 and
// HTTP/2.
func TestCancelInFlight(t *testing.T) {
	for _, proto := range []string{"HTTP/1.1", "HTTP/2"} {
		t.Run(proto, func(t *testing.T) {
			started := make(chan struct{}, 1)
			handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/hang" {
					started <- struct{}{}
					<-r.Context().Done()
					return
				}
				io.WriteString(w, "ok")
			})
			var tr *Transport
			var url string
			if proto == "HTTP/1.1" {
				srv, _ := newH1Server(t, handler)
				tr, url = newTestTransport(t, Options{}), srv.URL
			} else {
				srv, _, cfg := newH2TLSServer(t, handler, 100)
				tr, url = newTestTransport(t, Options{TLSClientConfig: cfg}), srv.URL
			}
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				<-started
				cancel()
			}()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/hang", nil)
			_, err := (&http.Client{Transport: tr}).Do(req)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled request: %v, want context.Canceled", err)
			}
			_, st := onlyStats(t, tr)
			if st.Leases != 0 {
				t.Errorf("a lease is still held after cancellation: %+v", st)
			}
			if code, _ := get(t, tr, url); code != 200 {
				t.Errorf("request after cancellation: %d", code)
			}
		})
	}
}

// TestCancelWhileReadingBody: a body read interrupted by its context
// returns the context's error and closes the connection.
func TestCancelWhileReadingBody(t *testing.T) {
	srv, _ := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	tr := newTestTransport(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	_, err = io.ReadAll(resp.Body)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel: %v", err)
	}
	resp.Body.Close()
	_, st := onlyStats(t, tr)
	if st.TotalConns != 0 || st.Leases != 0 {
		t.Errorf("stats after an interrupted body: %+v", st)
	}
}
