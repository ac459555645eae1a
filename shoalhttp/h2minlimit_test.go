package shoalhttp

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
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

// TestHTTP2MinConnsDefaultFollowsARaisedLimit: an HTTP/2 origin whose
// pool was made with a limit of one keeps one connection, and the default
// two once SetMaxConns raises its limit, as it would have been made with.
func TestHTTP2MinConnsDefaultFollowsARaisedLimit(t *testing.T) {
	srv, conns, tlsCfg := newH2TLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), 100)
	tr := newTestTransport(t, Options{MaxConns: 1, TLSClientConfig: tlsCfg})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Warm(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	if _, st := onlyStats(t, tr); st.TotalConns != 1 || st.MaxConns != 1 {
		t.Fatalf("MaxConns 1, after Warm: %+v, want 1 connection", st)
	}
	if err := tr.SetMaxConns(srv.URL, 4); err != nil {
		t.Fatal(err)
	}
	if err := tr.Warm(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	if _, st := onlyStats(t, tr); st.TotalConns != 2 || conns.n.Load() != 2 {
		t.Fatalf("after SetMaxConns 4 and Warm: %+v, server saw %d connections; want min(2, 4) = 2", st, conns.n.Load())
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

// TestPoolMadeUnderALowerLimitNeverPassesIt: an origin held to one
// connection by SetMaxConns before its pool is made dials only that one,
// not even a second for a moment as the pool is made: an HTTP/1.1 pool's
// MinIdle of four, or an HTTP/2 pool's default floor of two, would dial
// past the limit before it was applied. The race it guards against is
// short, so each protocol makes a fresh pool in many rounds; counting the
// dials, rather than the server's accepts, sees one cut short as well.
func TestPoolMadeUnderALowerLimitNeverPassesIt(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	h2, _, tlsCfg := newH2TLSServer(t, ok, 100)
	h1, _ := newH1Server(t, ok)
	cases := []struct {
		name string
		url  string
		opts Options
	}{
		{"HTTP/1.1 MinIdle 4", h1.URL, Options{MaxConns: 8, MinIdle: 4}},
		{"HTTP/2 MinConns default", h2.URL, Options{MaxConns: 8, TLSClientConfig: tlsCfg}},
	}
	const rounds = 50
	for _, tc := range cases {
		over, most := 0, int32(1)
		for range rounds {
			var dials atomic.Int32
			var nd net.Dialer
			opts := tc.opts
			opts.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				return nd.DialContext(ctx, network, addr)
			}
			tr, err := NewTransport(opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.SetMaxConns(tc.url, 1); err != nil {
				t.Fatal(err)
			}
			get(t, tr, tc.url)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err = tr.Close(ctx) // every dial has ended once it returns
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			if n := dials.Load(); n != 1 {
				over, most = over+1, max(most, n)
			}
		}
		if over > 0 {
			t.Errorf("%s: %d of %d pools made under SetMaxConns 1 dialled more than once, up to %d times; want 1 dial each", tc.name, over, rounds, most)
		}
	}
}

// TestHTTP2StatsMinConnsWithinTheLimit: an HTTP/2 origin held to one
// connection, by Options.MaxConns or by SetMaxConns, reports in Stats the
// floor it keeps, one, and the default two once its limit allows them.
func TestHTTP2StatsMinConnsWithinTheLimit(t *testing.T) {
	srv, _, tlsCfg := newH2TLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), 100)
	for _, byOptions := range []bool{true, false} {
		opts := Options{TLSClientConfig: tlsCfg}
		how := "SetMaxConns 1"
		if byOptions {
			opts.MaxConns, how = 1, "Options.MaxConns 1"
		}
		tr := newTestTransport(t, opts)
		if !byOptions {
			if err := tr.SetMaxConns(srv.URL, 1); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := tr.Warm(ctx, srv.URL); err != nil {
			t.Fatal(err)
		}
		if _, st := onlyStats(t, tr); st.MaxConns != 1 || st.MinConns != 1 {
			t.Errorf("%s, after Warm: Stats report MinConns %d at MaxConns %d, want 1 at 1", how, st.MinConns, st.MaxConns)
		}
		if err := tr.SetMaxConns(srv.URL, 4); err != nil {
			t.Fatal(err)
		}
		if _, st := onlyStats(t, tr); st.MaxConns != 4 || st.MinConns != 2 {
			t.Errorf("%s, then SetMaxConns 4: Stats report MinConns %d at MaxConns %d, want 2 at 4", how, st.MinConns, st.MaxConns)
		}
	}
}
