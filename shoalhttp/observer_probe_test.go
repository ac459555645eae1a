package shoalhttp

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// dialObserver counts one origin's failed dials.
type dialObserver struct {
	shoal.BaseObserver
	dialErrs atomic.Int64
}

func (o *dialObserver) ObserveDial(_ time.Duration, err error) {
	if err != nil {
		o.dialErrs.Add(1)
	}
}

// An https origin whose server is down from the start has no pool yet (its
// first connection's dial, which learns the protocol, failed), but its
// failed dials reach its Observer all the same: shoal_pool_dial_errors_total
// and the ShoalServerDown alert must see a server that was never up.
func TestObserverSeesAFailedFirstDial(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: dials are refused
	var mu sync.Mutex
	byOrigin := map[string]*dialObserver{}
	tr := newTestTransport(t, Options{Observer: func(origin string) shoal.Observer {
		mu.Lock()
		defer mu.Unlock()
		if byOrigin[origin] == nil {
			byOrigin[origin] = &dialObserver{}
		}
		return byOrigin[origin]
	}})
	req, err := http.NewRequest("GET", "https://"+addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
		t.Fatal("a request to a port nobody listens on succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	obs := byOrigin["https://"+addr]
	if obs == nil || obs.dialErrs.Load() != 1 {
		var n int64 = -1
		if obs != nil {
			n = obs.dialErrs.Load()
		}
		t.Fatalf("the origin's Observer heard of %d failed dials (-1: it was never asked for), want the 1; observers: %v", n, byOrigin)
	}
}

// A first dial its caller gave up on is not the server's failure: the
// Observer does not hear of it as a failed dial, as the origin's backoff
// does not count it. Before, a request whose deadline passed during the
// TLS handshake of a slow server counted in the origin's dial errors.
func TestObserverSkipsAFirstDialItsCallerGaveUpOn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held sync.WaitGroup
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close(); held.Wait() })
	held.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held.Go(func() { <-done; c.Close() }) // accepted, never answered
		}
	})
	var mu sync.Mutex
	byOrigin := map[string]*dialObserver{}
	tr := newTestTransport(t, Options{Observer: func(origin string) shoal.Observer {
		mu.Lock()
		defer mu.Unlock()
		if byOrigin[origin] == nil {
			byOrigin[origin] = &dialObserver{}
		}
		return byOrigin[origin]
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", "https://"+ln.Addr().String()+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
		t.Fatal("a request to a server that never answers succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if obs := byOrigin["https://"+ln.Addr().String()]; obs != nil && obs.dialErrs.Load() != 0 {
		t.Fatalf("the origin's Observer heard of %d failed dials for a request whose deadline passed, want none", obs.dialErrs.Load())
	}
}
