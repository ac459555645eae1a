package shoalpgx

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// newFakeDivisionPool is a pool of MaxConns 4 pipelining 4 deep on fakePG,
// inside the caller's synctest bubble, closed when the test ends, with the
// time it was made: the division's regular samples come every 50ms from
// then.
func newFakeDivisionPool(t *testing.T) (*Pool, time.Time) {
	t.Helper()
	f := newFakePG(t)
	p, err := NewWithConfig(context.Background(), f.config(t, func(c *Config) {
		c.MaxConns = 4
		c.Pipeline = 4
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p, time.Now()
}

// idleJustPastASample sleeps past the division's IdleTime (2s), so that a
// kind that stopped using its connections wants none and keeps them, and
// then to just past a regular sample, the longest wait for the next one.
func idleJustPastASample(start time.Time) {
	time.Sleep(3 * time.Second)
	since := time.Since(start) % (50 * time.Millisecond)
	time.Sleep(50*time.Millisecond - since + time.Millisecond)
	synctest.Wait()
}

// openWhole acquires n whole connections at once and releases them, so
// that the pool keeps n open and idle.
func openWhole(t *testing.T, ctx context.Context, p *Pool, n int) {
	t.Helper()
	held := make([]*Conn, 0, n)
	for range n {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	for _, c := range held {
		c.Release()
	}
}

// Shared connections kept idle after a burst hold every place in MaxConns;
// a caller that then needs a whole connection gets one within
// milliseconds: its pool, held back by its part of the division, asks for
// a division at once, rather than wait for the division's next regular
// sample (every 50ms). Under synctest, on fakePG, so that the wait is
// exact: dialling and closing take no time on the bubble's clock, and the
// caller comes in just after a regular sample, the longest wait without
// the ask.
func TestPipelineWholeConnectionComesWithinMilliseconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		p, start := newFakeDivisionPool(t)
		shared := func() int { return p.pipe.core.Stats().TotalConns }

		// Statements long enough that each keeps its connection busy,
		// until the shared connections have every place.
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 50 {
					if shared() == 4 {
						return
					}
					if _, err := p.Exec(ctx, "sleep 20ms"); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if n := shared(); n != 4 {
			t.Fatalf("%d shared connections open after the burst, want 4", n)
		}

		// The shared pool's demand falls to 0, and it keeps its four
		// connections.
		idleJustPastASample(start)
		if n := shared(); n != 4 {
			t.Fatalf("%d shared connections open while idle, want the 4 kept", n)
		}

		asked := time.Now()
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		waited := time.Since(asked)
		c.Release()
		if waited > 5*time.Millisecond {
			t.Fatalf("a whole connection came after %s, want within 5ms of asking", waited)
		}
		if n := shared(); n != 3 {
			t.Fatalf("%d shared connections after the whole one was dialled, want 3: one gave its place", n)
		}
	})
}

// The other way: whole connections kept idle after a burst hold the
// places the shared connections' floor leaves. A statement more than there
// are shared connections makes the shared kind's demand exceed its part,
// and a third shared connection comes within milliseconds, an idle whole
// connection giving its place, rather than at the division's next regular
// sample. (With only as many statements as shared connections, the spare
// the pool would open in the background is no demand of the division's,
// and waits for that statement.)
func TestPipelineSharedConnectionComesWithinMilliseconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		p, start := newFakeDivisionPool(t)
		shared := func() int { return p.pipe.core.Stats().TotalConns }
		whole := func() int { return p.core.Stats().TotalConns }
		synctest.Wait()
		if n := shared(); n != 2 {
			t.Fatalf("%d shared connections at the start, want the floor of 2", n)
		}
		openWhole(t, ctx, p, 2)
		// The whole connections' demand falls to 0, and they keep their
		// two places.
		idleJustPastASample(start)
		if w, s := whole(), shared(); w != 2 || s != 2 {
			t.Fatalf("%d whole and %d shared connections while idle, want 2 and 2", w, s)
		}

		asked := time.Now()
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				if _, err := p.Exec(ctx, "sleep 1s"); err != nil {
					t.Error(err)
				}
			})
		}
		for shared() < 3 && time.Since(asked) < time.Second {
			time.Sleep(time.Millisecond)
		}
		if waited := time.Since(asked); waited > 5*time.Millisecond {
			t.Fatalf("a third shared connection came after %s (%d open), want within 5ms of the third statement\nshared: %v\nwhole: %v", waited, shared(), p.pipe.core.Stats(), p.core.Stats())
		}
		if n := whole(); n != 1 {
			t.Fatalf("%d whole connections after the third shared one, want 1: one gave its place", n)
		}
		wg.Wait()
	})
}
