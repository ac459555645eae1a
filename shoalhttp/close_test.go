package shoalhttp

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"go.uber.org/goleak"
)

// TestCloseLeavesNoGoroutine: once its servers and the Transport are
// closed, nothing of shoalhttp runs: no pool maintenance, no HTTP/2 read
// loop, no dial.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	before := goleak.IgnoreCurrent()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) })
	h1srv, _ := newH1Server(t, h)
	h2srv, _, cfg := newH2TLSServer(t, h, 100)
	tr, err := NewTransport(Options{TLSClientConfig: cfg, MinIdle: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Warm(context.Background(), h1srv.URL, h2srv.URL); err != nil {
		t.Fatal(err)
	}
	if _, body := get(t, tr, h2srv.URL); body != "HTTP/2.0" {
		t.Fatalf("got %q", body)
	}
	if _, body := get(t, tr, h1srv.URL); body != "HTTP/1.1" {
		t.Fatalf("got %q", body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Close(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = tr.RoundTrip(mustRequest(t, h1srv.URL))
	if !errors.Is(err, shoal.ErrClosed) {
		t.Errorf("RoundTrip after Close: %v, want shoal.ErrClosed", err)
	}
	h1srv.Close()
	h2srv.Close()
	goleak.VerifyNone(t, before)
}

func TestWarmOriginsAndCloseIdleConnections(t *testing.T) {
	srv, conns := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	tr := newTestTransport(t, Options{MinIdle: 3, WarmOrigins: []string{srv.URL}})
	eventually(t, "3 warm connections", func() bool {
		for _, st := range tr.Stats() {
			return st.IdleConns >= 3
		}
		return false
	})
	tr.CloseIdleConnections()
	if n := len(tr.Stats()); n != 0 {
		t.Errorf("Stats lists %d origins after CloseIdleConnections", n)
	}
	if code, _ := get(t, tr, srv.URL); code != 200 {
		t.Fatal(code)
	}
	if n := conns.n.Load(); n < 4 {
		t.Errorf("server saw %d connections, want the 3 warm ones and a new one", n)
	}
}

func TestNewTransportNamesBadField(t *testing.T) {
	for _, tc := range []struct {
		opts  Options
		field string
	}{
		{Options{MaxConns: 2, MinIdle: 3}, "MinIdle"},
		{Options{MaxConns: 2, MinConns: 3}, "MinConns"},
		{Options{MaxConns: -1}, "MaxConns"},
		{Options{WarmOrigins: []string{"http://ok", "ftp://x"}}, "WarmOrigins[1]"},
		{Options{WarmOrigins: []string{"http://user:secret@"}}, "WarmOrigins[0]"},
		{Options{Partitions: -1}, "Partitions"},
		{Options{MaxResponseHeaderBytes: -1}, "MaxResponseHeaderBytes"},
		{Options{MaxLifetime: -1, LifetimeJitter: time.Minute}, "LifetimeJitter"},
		// HTTP/1.1's alone, but checked by NewTransport all the same,
		// not by the first request to an HTTP/1.1 origin.
		{Options{BargeWindow: math.MaxInt64}, "BargeWindow"},
	} {
		_, err := NewTransport(tc.opts)
		var ce *shoal.ConfigError
		if !errors.As(err, &ce) || ce.Struct != "shoalhttp.Options" || ce.Field != tc.field {
			t.Errorf("NewTransport(%+v) = %v, want a shoal.ConfigError for Options.%s", tc.opts, err, tc.field)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("NewTransport's error shows a password: %v", err)
		}
	}
}

func mustRequest(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// closeOnceBody is a request body that fails reads after Close, as a file
// or a pipe does, and counts its Closes.
type closeOnceBody struct {
	r      io.Reader
	closed atomic.Int64
}

func (b *closeOnceBody) Read(p []byte) (int, error) {
	if b.closed.Load() > 0 {
		return 0, errors.New("read after close")
	}
	return b.r.Read(p)
}

func (b *closeOnceBody) Close() error { b.closed.Add(1); return nil }

// TestCloseIdleConnectionsSparesWaitingRequests: a request waiting for a
// connection when CloseIdleConnections replaces the origin's pool goes on
// to the new pool with its body untouched, and the server gets all of it.
func TestCloseIdleConnectionsSparesWaitingRequests(t *testing.T) {
	release := make(chan struct{})
	got := make(chan string, 1)
	srv, _ := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-release
			return
		}
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
	}))
	tr := newTestTransport(t, Options{MaxConns: 1})
	slow := make(chan error, 1)
	go func() {
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL + "/slow")
		if err == nil {
			resp.Body.Close()
		}
		slow <- err
	}()
	eventually(t, "the slow request to hold the only connection", func() bool {
		for _, st := range tr.Stats() {
			return st.Leases == 1
		}
		return false
	})

	body := &closeOnceBody{r: strings.NewReader("every byte of this")}
	req, _ := http.NewRequest(http.MethodPost, srv.URL, body)
	posted := make(chan error, 1)
	go func() {
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		posted <- err
	}()
	eventually(t, "the POST to wait for the connection", func() bool {
		_, st := onlyStats(t, tr)
		return st.Waiting == 1
	})
	tr.CloseIdleConnections()
	if err := <-posted; err != nil {
		t.Fatalf("POST waiting through CloseIdleConnections: %v", err)
	}
	if b := <-got; b != "every byte of this" {
		t.Errorf("server got %q", b)
	}
	if n := body.closed.Load(); n != 1 {
		t.Errorf("the request body was closed %d times, want once", n)
	}
	close(release)
	if err := <-slow; err != nil {
		t.Errorf("slow request: %v", err)
	}
}

// TestRequestAfterCloseIsErrClosed: after Close every request fails with
// an error that matches shoal.ErrClosed, also for an origin whose first
// connection had failed (its protocol still unknown).
func TestRequestAfterCloseIsErrClosed(t *testing.T) {
	dead := "https://" + refusedAddr(t)
	tr, err := NewTransport(Options{DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.RoundTrip(mustRequest(t, dead)); err == nil {
		t.Fatal("a request to a closed port succeeded")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{dead, "http://127.0.0.1:1"} {
		_, err := tr.RoundTrip(mustRequest(t, url))
		if !errors.Is(err, shoal.ErrClosed) {
			t.Errorf("%s after Close: %v, want shoal.ErrClosed", url, err)
		}
	}
}
