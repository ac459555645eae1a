package shoalhttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalhttp"
)

// dialDurations is an Observer that keeps the duration of each successful
// dial it is told of.
type dialDurations struct {
	shoal.BaseObserver
	mu   sync.Mutex
	took []time.Duration
}

func (d *dialDurations) ObserveDial(took time.Duration, err error) {
	if err == nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.took = append(d.took, took)
	}
}

// An https origin's first connection is dialled by the probe, before the
// pool exists, and handed to the pool by its first dial: the Observer
// (db_client_connection_create_time) must hear of that dial with the time
// the connection took to open, not the instant the hand-over took.
func TestFirstDialReportsTheProbesDuration(t *testing.T) {
	const connect = 40 * time.Millisecond // how long the TCP connect takes, on the bubble's clock
	for _, proto := range []string{"HTTP/1.1", "HTTP/2"} {
		t.Run(proto, func(t *testing.T) { testFirstDialReportsTheProbesDuration(t, proto == "HTTP/2", connect) })
	}
}

func testFirstDialReportsTheProbesDuration(t *testing.T, h2 bool, connect time.Duration) {
	url, transport := slowDialOrigin(t, h2)
	synctest.Test(t, func(t *testing.T) {
		obs := &dialDurations{}
		tr := transport(t, connect, obs)
		resp, err := (&http.Client{Transport: tr}).Get(url)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if err := tr.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		obs.mu.Lock()
		defer obs.mu.Unlock()
		if len(obs.took) != 1 || obs.took[0] < connect {
			t.Errorf("successful dials reported as taking %v; want one of at least %v", obs.took, connect)
		}
	})
}

// attachingTracer is an Observer that wants the pool's Stats and holders
// and traces waits, as shoaldebug's and shoalotel's (with wait spans) do.
type attachingTracer struct {
	shoal.BaseObserver
	mu      sync.Mutex
	stats   func() shoal.Stats
	holders func() []shoal.Holder
}

func (a *attachingTracer) Attach(stats func() shoal.Stats) func() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stats = stats
	return func() {}
}

func (a *attachingTracer) AttachHolders(holders func() []shoal.Holder) func() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.holders = holders
	return func() {}
}

func (a *attachingTracer) TraceWait(context.Context, time.Time, time.Duration, error) {}

// The Observer of a pool whose first connection came from the probe keeps
// what it asked of the pool beyond the events: its Stats, its holders, and
// tracing, which names the code that took each lease.
func TestFirstDialObserverKeepsItsAttachments(t *testing.T) {
	inHandler, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		inHandler <- struct{}{}
		<-release
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	obs := &attachingTracer{}
	tr, err := shoalhttp.NewTransport(shoalhttp.Options{
		Proxy:           shoalhttp.NoProxy,
		TLSClientConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig,
		Observer:        func(string) shoal.Observer { return obs },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close(context.Background())
	done := make(chan error, 1)
	go func() {
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		if err == nil {
			err = resp.Body.Close()
		}
		done <- err
	}()
	<-inHandler
	obs.mu.Lock()
	stats, holders := obs.stats, obs.holders
	obs.mu.Unlock()
	switch {
	case stats == nil || holders == nil:
		t.Errorf("attached Stats %v, holders %v: want both", stats != nil, holders != nil)
	case stats().Leases != 1:
		t.Errorf("the attached Stats: %+v, want the request's lease", stats())
	default:
		if h := holders(); len(h) != 1 || h[0].AcquiredBy == "" {
			t.Errorf("holders %+v: want the request's, named as tracing names it", h)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
