package shoalhttp

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// TestSetMaxConnsPerOrigin sets an origin's limit before its first request
// (the pool made for it takes it), then shrinks the busy pool: its
// connections close as their responses end, down to the new limit.
func TestSetMaxConnsPerOrigin(t *testing.T) {
	release := make(chan struct{})
	var inFlight sync.WaitGroup
	srv, conns := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-release
		}
		w.Write([]byte("ok"))
	}))
	tr := newTestTransport(t, Options{MaxConns: 8})
	if err := tr.SetMaxConns(srv.URL, 3); err != nil {
		t.Fatal(err)
	}
	for range 6 {
		inFlight.Go(func() { get(t, tr, srv.URL+"/slow") })
	}
	eventually(t, "three requests on the wire and three waiting", func() bool {
		all := tr.Stats()
		s := all[srv.URL]
		return s.InUseConns == 3 && s.Waiting == 3
	})
	if err := tr.SetMaxConns(srv.URL, 1); err != nil {
		t.Fatal(err)
	}
	close(release)
	inFlight.Wait()
	_, s := onlyStats(t, tr)
	if s.TotalConns != 1 || s.MaxConns != 1 {
		t.Fatalf("after the shrink: %+v", s)
	}
	if n := conns.n.Load(); n != 3 {
		t.Fatalf("the server saw %d connections, want 3 (the limit set before the first request)", n)
	}
	if err := tr.SetMaxConns(srv.URL, 0); err == nil || !strings.Contains(err.Error(), "must be in [1, 2147483647]") {
		t.Fatalf("SetMaxConns(0): %v", err)
	}
	// The core's bound, not one of the Transport's own.
	if err := tr.SetMaxConns(srv.URL, 1<<21); err != nil {
		t.Fatalf("SetMaxConns(1<<21): %v", err)
	}
	if err := tr.SetMaxConns("ftp://x", 2); err == nil {
		t.Fatal("SetMaxConns with a bad origin accepted")
	}
}

// TestSetMaxConnsBeforeTheProtocolIsKnown: an https origin's pool is made
// by its first request, once the server has chosen the protocol; a limit
// set before then is that pool's, over HTTP/1.1 and HTTP/2 alike.
func TestSetMaxConnsBeforeTheProtocolIsKnown(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		srv, _, tlsCfg := newTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("ok"))
		}), h2)
		tr := newTestTransport(t, Options{MaxConns: 8, TLSClientConfig: tlsCfg})
		if err := tr.SetMaxConns(srv.URL, 2); err != nil {
			t.Fatal(err)
		}
		get(t, tr, srv.URL+"/")
		if _, s := onlyStats(t, tr); s.MaxConns != 2 {
			t.Errorf("HTTP/2 %v: the pool made by the first request has MaxConns %d, want 2", h2, s.MaxConns)
		}
	}
}

// TestSetMaxConnsHoldsAfterCloseIdleConnections: SetMaxConns's limit holds
// for the origin's later pools, which a request makes after
// CloseIdleConnections dropped the pool it resized, over HTTP/1.1 and
// HTTP/2 alike; other origins keep Options.MaxConns.
func TestSetMaxConnsHoldsAfterCloseIdleConnections(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	for _, h2 := range []bool{false, true} {
		srv, _, tlsCfg := newTLSServer(t, ok, h2)
		other, _ := newH1Server(t, ok)
		tr := newTestTransport(t, Options{MaxConns: 8, TLSClientConfig: tlsCfg})
		get(t, tr, srv.URL+"/")
		if err := tr.SetMaxConns(srv.URL, 3); err != nil {
			t.Fatal(err)
		}
		tr.CloseIdleConnections()
		get(t, tr, srv.URL+"/")
		get(t, tr, other.URL+"/")
		all := tr.Stats()
		if got := all[srv.URL].MaxConns; got != 3 {
			t.Errorf("HTTP/2 %v: the pool made after CloseIdleConnections has MaxConns %d, want 3 (SetMaxConns's)", h2, got)
		}
		if got := all[other.URL].MaxConns; got != 8 {
			t.Errorf("HTTP/2 %v: another origin's pool has MaxConns %d, want Options.MaxConns (8)", h2, got)
		}
	}
	// A plain HTTP/1.1 origin, whose pool is made with the origin, before
	// any probe: the limit reaches it too.
	plain, _ := newH1Server(t, ok)
	tr := newTestTransport(t, Options{MaxConns: 8})
	get(t, tr, plain.URL+"/")
	if err := tr.SetMaxConns(plain.URL, 3); err != nil {
		t.Fatal(err)
	}
	tr.CloseIdleConnections()
	get(t, tr, plain.URL+"/")
	if got := tr.Stats()[plain.URL].MaxConns; got != 3 {
		t.Errorf("plain HTTP/1.1: the pool made after CloseIdleConnections has MaxConns %d, want 3 (SetMaxConns's)", got)
	}
}

// TestFloorsComeBackAsTheOriginLimitRises: an HTTP/1.1 origin whose pool
// is made under a SetMaxConns limit below its MinIdle keeps the floor only
// up to that limit, and in full once SetMaxConns raises the limit again.
func TestFloorsComeBackAsTheOriginLimitRises(t *testing.T) {
	srv, conns := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tr := newTestTransport(t, Options{MaxConns: 8, MinIdle: 4})
	if err := tr.SetMaxConns(srv.URL, 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Warm(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	if _, st := onlyStats(t, tr); st.TotalConns != 1 || st.MaxConns != 1 {
		t.Fatalf("MinIdle 4 under SetMaxConns 1, after Warm: %+v, want 1 connection", st)
	}
	if err := tr.SetMaxConns(srv.URL, 8); err != nil {
		t.Fatal(err)
	}
	if err := tr.Warm(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	if _, st := onlyStats(t, tr); st.TotalConns != 4 || conns.n.Load() != 4 {
		t.Fatalf("after SetMaxConns 8 and Warm: %+v, server saw %d connections; want MinIdle (4)", st, conns.n.Load())
	}
}

// TestSetMaxConnsWhileThePoolIsMade: a SetMaxConns that runs as the
// origin's first request makes its pool holds for that pool, whichever of
// the two finishes first. The pool's Observer starts it from Attach,
// which New calls as it ends, so that it lands around the moment the
// pool is put in place; the race is short, hence the rounds.
func TestSetMaxConnsWhileThePoolIsMade(t *testing.T) {
	srv, _, tlsCfg := newH2TLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), 100)
	const rounds = 50
	lost := 0
	for range rounds {
		done := make(chan struct{})
		var tr *Transport
		resize := func() {
			go func() {
				defer close(done)
				if err := tr.SetMaxConns(srv.URL, 3); err != nil {
					t.Error(err)
				}
			}()
		}
		tr, err := NewTransport(Options{MaxConns: 8, TLSClientConfig: tlsCfg, Observer: func(string) shoal.Observer {
			return attachHook{attached: resize}
		}})
		if err != nil {
			t.Fatal(err)
		}
		get(t, tr, srv.URL)
		<-done
		if st := tr.Stats()[srv.URL]; st.MaxConns != 3 {
			lost++
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = tr.Close(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d pools kept MaxConns 8 after SetMaxConns 3 ran beside their making; want 3", lost, rounds)
	}
}

// attachHook is an Observer that calls attached when a pool attaches it,
// at the end of shoal.New.
type attachHook struct {
	shoal.BaseObserver
	attached func()
}

func (a attachHook) Attach(func() shoal.Stats) func() {
	a.attached()
	return func() {}
}
