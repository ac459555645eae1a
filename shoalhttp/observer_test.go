package shoalhttp

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// originObserver counts what one origin's pools report.
type originObserver struct {
	shoal.BaseObserver
	acquires, releases atomic.Int64
}

func (o *originObserver) ObserveAcquire(time.Duration) { o.acquires.Add(1) }
func (o *originObserver) ObserveRelease(time.Duration) { o.releases.Add(1) }

func TestObserverPerOrigin(t *testing.T) {
	srv, _ := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	var mu sync.Mutex
	byOrigin := map[string]*originObserver{}
	tr := newTestTransport(t, Options{Observer: func(origin string) shoal.Observer {
		mu.Lock()
		defer mu.Unlock()
		if byOrigin[origin] == nil {
			byOrigin[origin] = &originObserver{}
		}
		return byOrigin[origin]
	}})
	for range 3 {
		if code, body := get(t, tr, srv.URL); code != 200 || body != "ok" {
			t.Fatalf("got %d %q", code, body)
		}
	}
	origin, _ := onlyStats(t, tr)
	mu.Lock()
	obs := byOrigin[origin]
	mu.Unlock()
	if obs == nil || len(byOrigin) != 1 {
		t.Fatalf("observers by origin: %v, Stats origin %q", byOrigin, origin)
	}
	if obs.acquires.Load() != 3 || obs.releases.Load() != 3 {
		t.Fatalf("origin %s: %d acquires, %d releases for 3 requests", origin, obs.acquires.Load(), obs.releases.Load())
	}
}
