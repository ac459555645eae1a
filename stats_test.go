package shoal

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestStatsAcquiresNeverFalls: while a connection closes (its hooks and
// Close running), Stats.Acquires does not dip: it is exported as a
// counter.
func TestStatsAcquiresNeverFalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		closing, finish := make(chan struct{}), make(chan struct{})
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
		p.cfg.Close = func(c *fakeConn) error {
			close(closing)
			<-finish
			return d.close(c)
		}
		for range 10 {
			mustAcquire(t, p).Release()
		}
		l := mustAcquire(t, p)
		before := p.Stats().Acquires
		go l.Discard()
		<-closing
		during := p.Stats().Acquires
		close(finish)
		synctest.Wait()
		if n := p.Stats().Closed; n != 1 {
			t.Fatalf("Closed = %d once the close could finish, want 1", n)
		}
		if after := p.Stats().Acquires; during < before || after != 11 {
			t.Errorf("Acquires %d before, %d while closing, %d after; want 11 throughout", before, during, after)
		}
	})
}

// scrapingAttacher calls the pool's Stats from another goroutine the
// moment it is attached, as a metrics scrape may.
type scrapingAttacher struct {
	BaseObserver
	done chan struct{}
}

func (a *scrapingAttacher) Attach(stats func() Stats) (detach func()) {
	go func() {
		defer close(a.done)
		for range 100 {
			stats()
		}
	}()
	return func() {}
}

// TestStatsDuringNewIsSafe: New attaches its observer only once the pool
// is whole, so a scrape that calls Stats at once races nothing (run with
// -race).
func TestStatsDuringNewIsSafe(t *testing.T) {
	for range 20 {
		a := &scrapingAttacher{done: make(chan struct{})}
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 4, BargeWindow: time.Millisecond, Observer: a})
		<-a.done
		mustAcquire(t, p).Release()
	}
}
