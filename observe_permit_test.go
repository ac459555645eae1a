package shoal

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// A dial that fails because its Budget gave no permit counts in
// Stats.DialErrors, so the Observer hears of it too: shoalprom's
// shoal_pool_dial_errors_total, shoalotel's and the live page's last dial
// error must not miss failures Stats counts.
func TestObserverSeesADialFailedForItsPermit(t *testing.T) {
	b := newTestBudget(t, 1)
	errNoBudget := errors.New("the budget is gone")
	b.err = errNoBudget
	obs := &lastDialErrObserver{}
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, Budget: b, Observer: obs})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := p.Acquire(ctx); !errors.Is(err, errNoBudget) {
		t.Fatalf("Acquire when the budget fails: %v", err)
	}
	s := p.Stats()
	if s.DialErrors == 0 || obs.dialErrs.Load() != s.DialErrors || obs.dials.Load() != s.Dials {
		t.Fatalf("Stats counts %d dials, %d failed; the Observer heard of %d, %d failed", s.Dials, s.DialErrors, obs.dials.Load(), obs.dialErrs.Load())
	}
	if err := obs.last(); !errors.Is(err, errNoBudget) {
		t.Fatalf("the Observer's last dial error is %v, want the budget's", err)
	}
}

// lastDialErrObserver counts events and keeps the last dial's error.
type lastDialErrObserver struct {
	countingObserver
	mu      sync.Mutex
	lastErr error
}

func (o *lastDialErrObserver) ObserveDial(took time.Duration, err error) {
	o.countingObserver.ObserveDial(took, err)
	if err != nil {
		o.mu.Lock()
		o.lastErr = err
		o.mu.Unlock()
	}
}

func (o *lastDialErrObserver) last() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lastErr
}
