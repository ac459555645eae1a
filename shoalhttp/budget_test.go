package shoalhttp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// countingConns wraps Options.DialContext's connections to count those
// open at the client, every one the Transport dials (probes included), and
// records the most open at once.
type countingConns struct {
	open, most, dials atomic.Int32
}

func (c *countingConns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c.dials.Add(1)
	n := c.open.Add(1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
	return &countedConn{Conn: nc, c: c}, nil
}

type countedConn struct {
	net.Conn
	c      *countingConns
	closed atomic.Bool
}

func (cc *countedConn) Close() error {
	if !cc.closed.Swap(true) {
		cc.c.open.Add(-1)
	}
	return cc.Conn.Close()
}

// Many origins, HTTP/1.1 and HTTP/2, under one MaxConnsTotal: every
// request is served, and the connections open at the client (each one
// the Transport dials, origins' first connections included) never exceed
// the cap.
func TestMaxConnsTotalAcrossOrigins(t *testing.T) {
	const origins, capTotal, workers, perWorker = 8, 4, 16, 15
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(200 * time.Microsecond)
		fmt.Fprint(w, "ok")
	})
	var urls []string
	var clientTLS *tls.Config // httptest's servers share one certificate
	for i := range origins {
		if i%2 == 0 {
			srv, _ := newH1Server(t, handler)
			urls = append(urls, srv.URL)
		} else {
			srv, _, cfg := newH2TLSServer(t, handler, 0)
			urls = append(urls, srv.URL)
			clientTLS = cfg
		}
	}
	cc := &countingConns{}
	tr := newTestTransport(t, Options{MaxConnsTotal: capTotal, MaxConns: 4, DialContext: cc.dial, TLSClientConfig: clientTLS})
	client := &http.Client{Transport: tr}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var served atomic.Int32
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				req, _ := http.NewRequestWithContext(ctx, "GET", urls[(w*7+i)%origins], nil)
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("GET: %v", err)
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || string(b) != "ok" {
					t.Errorf("body %q, %v", b, err)
					return
				}
				served.Add(1)
			}
		})
	}
	wg.Wait()
	if m := cc.most.Load(); m > capTotal {
		t.Fatalf("%d connections open at once under MaxConnsTotal %d", m, capTotal)
	}
	if n := served.Load(); n != workers*perWorker {
		t.Fatalf("%d requests served of %d", n, workers*perWorker)
	}
	b := tr.Budget()
	s := b.Stats()
	if s.Size != capTotal || s.InUse > capTotal {
		t.Fatalf("budget stats: %+v", s)
	}
	for origin, st := range tr.Stats() {
		if st.BudgetMembers < 1 || st.BudgetMembers > origins {
			t.Fatalf("%s: BudgetMembers %d", origin, st.BudgetMembers)
		}
	}
	t.Logf("most open at once %d of %d; %d dials for %d requests to %d origins", cc.most.Load(), capTotal, cc.dials.Load(), served.Load(), origins)
	closeCtx, cancelClose := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelClose()
	if err := tr.Close(closeCtx); err != nil {
		t.Fatal(err)
	}
	if n := cc.open.Load(); n != 0 {
		t.Fatalf("%d connections open after Close", n)
	}
	if s := b.Stats(); s.InUse != 0 || len(s.Members) != 0 {
		t.Fatalf("after Close: %+v", s)
	}
}

// A new origin's connection waits for a permit like any other: with the
// cap held by another origin's requests, a request to a new origin dials
// nothing and ends with its context; once the busy origin's connections
// are idle, one closes for the new origin.
func TestMaxConnsTotalFirstConnectionWaits(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	defer free() // a failure below must not leave the handlers waiting
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		fmt.Fprint(w, "ok")
	})
	busy, _ := newH1Server(t, slow)
	other, otherConns := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	cc := &countingConns{}
	tr := newTestTransport(t, Options{MaxConnsTotal: 2, DialContext: cc.dial})
	client := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			resp, err := client.Get(busy.URL)
			if err != nil {
				t.Errorf("GET busy: %v", err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	eventually(t, "both permits held by the busy origin", func() bool {
		return tr.Budget().Stats().InUse == 2 && cc.open.Load() == 2
	})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", other.URL, nil)
	_, err := client.Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GET of a new origin with the cap held: %v, want its deadline (budget %+v)", err, tr.Budget().Stats())
	}
	if n := otherConns.n.Load(); n != 0 {
		t.Fatalf("the new origin was dialled %d times with no permit", n)
	}
	free()
	wg.Wait()
	// Now the busy origin is idle: the new origin gets a connection,
	// closing one of the idle ones for it.
	if code, body := get(t, tr, other.URL); code != 200 || body != "ok" {
		t.Fatalf("GET after the cap freed: %d %q", code, body)
	}
	if m := cc.most.Load(); m > 2 {
		t.Fatalf("%d connections open at once under MaxConnsTotal 2", m)
	}
}

func TestMaxConnsTotalOptions(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{MaxConnsTotal: 4, Budget: func(string) shoal.Budget { return nil }}, "not both"},
		{Options{MaxConnsTotal: 4, MinConns: 5}, "MinConns"},
	} {
		_, err := NewTransport(tc.opts)
		var ce *shoal.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want a ConfigError naming %s", tc.opts, err, tc.want)
		}
	}
	tr := newTestTransport(t, Options{})
	if tr.Budget() != nil {
		t.Fatal("a Budget without MaxConnsTotal")
	}
	// Negative is off, as everywhere: no cap, not an error.
	if tr := newTestTransport(t, Options{MaxConnsTotal: -1}); tr.Budget() != nil {
		t.Fatal("a Budget with MaxConnsTotal -1")
	}
}

// Origins' first connections count against their own origin's share once
// its pool adopts them, not against the probes': with more origins than
// the cap holds at one connection each, visited one at a time, every
// request is served (an idle origin's connection closing for the next
// one's), and the connections open never exceed the cap.
func TestMaxConnsTotalManyOriginsOneAtATime(t *testing.T) {
	const origins, capTotal = 12, 4
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	var urls []string
	var clientTLS *tls.Config
	for i := range origins {
		if i%2 == 0 {
			srv, _ := newH1Server(t, ok)
			urls = append(urls, srv.URL)
		} else {
			srv, _, cfg := newH2TLSServer(t, ok, 0)
			urls = append(urls, srv.URL)
			clientTLS = cfg
		}
	}
	cc := &countingConns{}
	tr := newTestTransport(t, Options{MaxConnsTotal: capTotal, DialContext: cc.dial, TLSClientConfig: clientTLS})
	client := &http.Client{Transport: tr}
	for round := range 2 {
		for i, u := range urls {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
			resp, err := client.Do(req)
			if err != nil {
				cancel()
				t.Fatalf("round %d, origin %d: GET: %v (budget %+v)", round, i, err, tr.Budget().Stats())
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			cancel()
			if err != nil || string(b) != "ok" {
				t.Fatalf("round %d, origin %d: body %q, %v", round, i, b, err)
			}
			for _, m := range tr.Budget().Stats().Members {
				if m.Name == "first connections" && m.Held != 0 {
					t.Fatalf("round %d, origin %d: %d permits still counted as first connections once their pools took them", round, i, m.Held)
				}
			}
		}
	}
	if m := cc.most.Load(); m > capTotal {
		t.Fatalf("%d connections open at once under MaxConnsTotal %d", m, capTotal)
	}
	if s := tr.Budget().Stats(); s.InUse > capTotal {
		t.Fatalf("budget stats: %+v", s)
	}
}

// Each origin claims MinConns of the cap: an origin whose minimum would
// not fit beside the others' fails at once, with an error naming both
// settings, dialling nothing, instead of waiting until its context ends.
func TestMaxConnsTotalMinConnsDoNotFit(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	a, _ := newH1Server(t, ok)
	b, _, clientTLS := newH2TLSServer(t, ok, 0)
	plain, plainConns := newH1Server(t, ok)            // its pool is made with the origin
	secure, secureConns, _ := newH2TLSServer(t, ok, 0) // its pool waits for a first connection
	tr := newTestTransport(t, Options{MinConns: 4, MaxConnsTotal: 8, TLSClientConfig: clientTLS})
	for _, srv := range []*httptest.Server{a, b} {
		if code, body := get(t, tr, srv.URL); code != 200 || body != "ok" {
			t.Fatalf("GET %s: %d %q", srv.URL, code, body)
		}
	}
	for _, srv := range []*httptest.Server{plain, secure} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
		_, err := (&http.Client{Transport: tr}).Do(req)
		if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "MinConns 4") || !strings.Contains(err.Error(), "MaxConnsTotal 8") {
			t.Fatalf("GET %s, a third origin with MinConns 4 under MaxConnsTotal 8: %v (context: %v), want an error naming MinConns and MaxConnsTotal at once", srv.URL, err, ctx.Err())
		}
		cancel()
	}
	if n := plainConns.n.Load() + secureConns.n.Load(); n != 0 {
		t.Fatalf("the origins that do not fit were dialled %d times", n)
	}
	for _, m := range tr.Budget().Stats().Members {
		if m.Name == "first connections" {
			t.Fatalf("a refused origin's probe is still a member: %+v", m)
		}
	}
	// Closing the first two origins' pools ends their claims: the others
	// fit then.
	tr.CloseIdleConnections()
	eventually(t, "the first origins' pools closed", func() bool { return len(tr.Budget().Stats().Members) == 0 })
	for _, srv := range []*httptest.Server{plain, secure} {
		if code, body := get(t, tr, srv.URL); code != 200 || body != "ok" {
			t.Fatalf("GET %s once the others closed: %d %q", srv.URL, code, body)
		}
	}
}
