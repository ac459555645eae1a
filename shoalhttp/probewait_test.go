package shoalhttp_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal"
)

// waitRecorder is an Observer that records each successful acquire's wait
// and each wait it is asked to trace.
type waitRecorder struct {
	shoal.BaseObserver
	mu     sync.Mutex
	waits  []time.Duration
	traced []tracedWait
}

type tracedWait struct {
	start time.Time
	wait  time.Duration
}

func (r *waitRecorder) ObserveAcquire(wait time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits = append(r.waits, wait)
}

func (r *waitRecorder) TraceWait(_ context.Context, start time.Time, wait time.Duration, _ error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.traced = append(r.traced, tracedWait{start, wait})
}

// Requests that arrive before an origin's protocol is known wait for its
// first connection (the probe's dial): the one that dials it and the one
// that waits for that dial. Their acquires must count that wait, in the
// wait histogram (ObserveAcquire) and in the wait span (WaitTracer) from
// when the request arrived, as a wait for any other dial does.
func TestRequestsWaitingForTheProbeRecordTheirWait(t *testing.T) {
	const connect = 40 * time.Millisecond // how long each TCP connect takes, on the bubble's clock
	for _, proto := range []string{"HTTP/1.1", "HTTP/2"} {
		t.Run(proto, func(t *testing.T) { testProbeWaitRecorded(t, proto == "HTTP/2", connect) })
	}
}

func testProbeWaitRecorded(t *testing.T, h2 bool, connect time.Duration) {
	url, transport := slowDialOrigin(t, h2)
	synctest.Test(t, func(t *testing.T) {
		rec := &waitRecorder{}
		tr := transport(t, connect, rec)
		arrived := time.Now()
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				resp, err := (&http.Client{Transport: tr}).Get(url)
				if err != nil {
					t.Error(err)
					return
				}
				_ = resp.Body.Close()
			})
		}
		wg.Wait()
		if err := tr.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.waits) != 2 || min(rec.waits[0], rec.waits[1]) < connect {
			t.Errorf("acquire waits %v; want two of at least %v, the first connection's dial", rec.waits, connect)
		}
		if len(rec.traced) != 2 {
			t.Fatalf("traced waits %+v; want two", rec.traced)
		}
		for _, w := range rec.traced {
			if !w.start.Equal(arrived) || w.wait < connect {
				t.Errorf("traced wait %+v; want one from %v, when the requests arrived, of at least %v", w, arrived, connect)
			}
		}
	})
}
