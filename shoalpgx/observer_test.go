package shoalpgx

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// pgxObserver counts what the core tells it about a shoalpgx pool.
type pgxObserver struct {
	shoal.BaseObserver
	acquires, releases, dials atomic.Int64
	mu                        sync.Mutex
	leaks                     []shoal.LeakReport
}

func (o *pgxObserver) ObserveAcquire(time.Duration)     { o.acquires.Add(1) }
func (o *pgxObserver) ObserveRelease(time.Duration)     { o.releases.Add(1) }
func (o *pgxObserver) ObserveDial(time.Duration, error) { o.dials.Add(1) }
func (o *pgxObserver) ObserveLeak(r shoal.LeakReport) {
	o.mu.Lock()
	o.leaks = append(o.leaks, r)
	o.mu.Unlock()
}

func TestObserverAndLeakThresholdReachTheCore(t *testing.T) {
	obs := &pgxObserver{}
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 2
		c.Observer = obs
		c.LeakThreshold = 50 * time.Millisecond
	})
	ctx := pgtest.Ctx(t)
	for i := 0; i < 3; i++ {
		var one int
		if err := p.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
			t.Fatal(err)
		}
	}
	if obs.acquires.Load() != 3 || obs.releases.Load() != 3 || obs.dials.Load() < 1 {
		t.Fatalf("observer saw %d acquires, %d releases, %d dials", obs.acquires.Load(), obs.releases.Load(), obs.dials.Load())
	}
	c := holdTooLong(t, p)
	// The core counts the leak before it tells the Observer: wait for
	// both.
	pgtest.WaitFor(t, 10*time.Second, "the leak counted and observed", func() bool {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		return p.Stat().Shoal().Leaked > 0 && len(obs.leaks) > 0
	})
	c.Release()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	// This test lives in package shoalpgx, whose frames the report's
	// Function skips as the adapter's own; the stack still shows them.
	if len(obs.leaks) == 0 || !strings.Contains(obs.leaks[0].Stack, "shoalpgx.holdTooLong") {
		t.Fatalf("leak reports %+v", obs.leaks)
	}
}

// holdTooLong acquires a connection that the test then keeps past the
// leak threshold.
//
//go:noinline
func holdTooLong(t *testing.T, p *Pool) *Conn {
	c, err := p.Acquire(pgtest.Ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
