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

// dialObservers is an Options.Observer that keeps a dialObserver per
// origin, made when the Transport first asks for it.
type dialObservers struct {
	mu       sync.Mutex
	byOrigin map[string]*dialObserver
}

func (d *dialObservers) forOrigin(origin string) shoal.Observer {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byOrigin[origin] == nil {
		d.byOrigin[origin] = &dialObserver{}
	}
	return d.byOrigin[origin]
}

// of returns origin's dialObserver, nil if the Transport never asked.
func (d *dialObservers) of(origin string) *dialObserver {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.byOrigin[origin]
}

// An https origin whose server is down from the start has no pool yet (its
// first connection's dial, which learns the protocol, failed), but its
// failed dials reach its Observer all the same: shoal_pool_dial_errors_total
// and the ShoalServerDown alert must see a server that was never up.
func TestObserverSeesAFailedFirstDial(t *testing.T) {
	addr := refusedAddr(t)
	obs := &dialObservers{byOrigin: map[string]*dialObserver{}}
	tr := newTestTransport(t, Options{Observer: obs.forOrigin})
	req, err := http.NewRequest("GET", "https://"+addr+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
		t.Fatal("a request to a port nobody listens on succeeded")
	}
	o := obs.of("https://" + addr)
	if o == nil || o.dialErrs.Load() != 1 {
		var n int64 = -1
		if o != nil {
			n = o.dialErrs.Load()
		}
		t.Fatalf("the origin's Observer heard of %d failed dials (-1: it was never asked for), want the 1; observers: %v", n, obs.byOrigin)
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
	obs := &dialObservers{byOrigin: map[string]*dialObserver{}}
	tr := newTestTransport(t, Options{Observer: obs.forOrigin})
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
	if o := obs.of("https://" + ln.Addr().String()); o != nil && o.dialErrs.Load() != 0 {
		t.Fatalf("the origin's Observer heard of %d failed dials for a request whose deadline passed, want none", o.dialErrs.Load())
	}
}
