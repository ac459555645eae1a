package shoalhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
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
		{Options{DialTimeout: -time.Second}, "DialTimeout"},
		{Options{TLSHandshakeTimeout: -time.Second}, "TLSHandshakeTimeout"},
		{Options{MaxLifetime: time.Second, LifetimeJitter: 2 * time.Second}, "LifetimeJitter"},
	} {
		_, err := NewTransport(tc.opts)
		var oe *OptionsError
		if !errors.As(err, &oe) || oe.Field != tc.field {
			t.Errorf("NewTransport(%+v) = %v, want an OptionsError for %s", tc.opts, err, tc.field)
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
