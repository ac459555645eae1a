package shoal

import (
	"context"
	"errors"
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

// closeReasons is an Observer that records the reason of every close.
type closeReasons struct {
	BaseObserver
	r reasons
}

func (o *closeReasons) ObserveClose(why Reason) { o.r.hook(nil, why) }

// TestStatsCountConnectRejection: a new connection that Hooks.OnConnect
// rejects is closed (OnDisconnect is told ReasonRejected, Config.Close
// runs), so it counts in Stats.Closed and the Observer's closes, as every
// other close does, and in DialErrors as a failed dial.
func TestStatsCountConnectRejection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var hooked reasons
		obs := &closeReasons{}
		p, d := newTestPool(t, Config[*fakeConn]{
			MaxConns: 1,
			Observer: obs,
			Hooks: Hooks[*fakeConn]{
				OnConnect: func(_ context.Context, c *fakeConn) error {
					if c.id == 1 {
						return errBoom
					}
					return nil
				},
				OnDisconnect: hooked.hook,
			},
		})
		if _, err := p.Acquire(context.Background()); !errors.Is(err, errBoom) {
			t.Fatalf("acquire: %v, want OnConnect's error", err)
		}
		synctest.Wait()
		s := p.Stats()
		if closes := d.closes.Load(); closes != 1 || hooked.count(ReasonRejected) != 1 {
			t.Fatalf("%d closes, %d OnDisconnect(rejected); want the rejected connection's one of each", closes, hooked.count(ReasonRejected))
		}
		if s.Closed != 1 || obs.r.count(ReasonRejected) != 1 || s.DialErrors != 1 || s.Dials != 1 {
			t.Errorf("Stats: %d closed, %d dials, %d dial errors; Observer: %d closes (rejected); want 1 of each for the connection OnConnect rejected",
				s.Closed, s.Dials, s.DialErrors, obs.r.count(ReasonRejected))
		}
		// A connection that passes OnConnect and later closes adds one
		// more, so Closed counts every Config.Close the pool ran.
		l := acquireAfterBackoff(t, p, errBoom)
		l.Discard()
		synctest.Wait()
		if s := p.Stats(); s.Closed != int64(d.closes.Load()) || s.Closed != 2 {
			t.Errorf("Stats.Closed = %d after a discard, Config.Close ran %d times; want 2 and 2", s.Closed, d.closes.Load())
		}
	})
}

// A connection let go counts by its reason at once, before its hooks and
// Close run: a Stats that no longer has it in TotalConns says why it went
// (ClosedFor), while Closed counts it once its Close has returned.
// shoalpgx's Stat reads it for pgxpool's destroy counts, which pgxpool
// bumps before it destroys.
func TestStatsClosedForCountsAsTheConnectionLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		d := &fakeDialer{}
		p, _ := newTestPool(t, Config[*fakeConn]{
			MaxConns:    1,
			MaxIdleTime: time.Second,
			Dial:        d.dial,
			Close: func(c *fakeConn) error {
				<-release // a Close that waits on the network
				return d.close(c)
			},
		})
		l := mustAcquire(t, p)
		l.Release()
		time.Sleep(3 * time.Second) // past MaxIdleTime and the maintenance pass after it
		synctest.Wait()
		s := p.Stats()
		if s.TotalConns != 0 || s.Closing != 1 || s.ClosedFor(ReasonIdle) != 1 || s.Closed != 0 {
			t.Fatalf("while the idle connection's Close runs: %d open, %d closing, %d closed for idleness, %d closed; want 0, 1, 1, 0",
				s.TotalConns, s.Closing, s.ClosedFor(ReasonIdle), s.Closed)
		}
		close(release)
		synctest.Wait()
		s = p.Stats()
		if s.Closed != 1 || s.ClosedFor(ReasonIdle) != 1 || s.ClosedFor(ReasonLifetime) != 0 || s.ClosedFor(Reason(99)) != 0 {
			t.Errorf("once closed: %d closed, %d for idleness, %d for lifetime; want 1, 1, 0", s.Closed, s.ClosedFor(ReasonIdle), s.ClosedFor(ReasonLifetime))
		}
	})
}
