package shoalpgx

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

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
		f := newFakePG(t)
		p, err := NewWithConfig(ctx, f.config(t, func(c *Config) {
			c.MaxConns = 4
			c.Pipeline = 4
		}))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		start := time.Now() // the division's regular samples come every 50ms from here
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

		// Past the division's IdleTime (2s) the shared pool's demand is 0
		// and it keeps its four connections; then just past a regular
		// sample.
		time.Sleep(3 * time.Second)
		since := time.Since(start) % (50 * time.Millisecond)
		time.Sleep(50*time.Millisecond - since + time.Millisecond)
		synctest.Wait()
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
