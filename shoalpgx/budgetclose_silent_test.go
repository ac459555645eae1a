package shoalpgx

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal"
)

// A budgeted pool's close waits for the server to end each backend, but
// for closeTimeout at most: a server that never answers Terminate (a
// crashed machine, a partition) must not hold Close, or the permit, for
// ever.
func TestBudgetedCloseGivesUpOnASilentServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePG(t)
		b, err := shoal.NewBudget(1)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewWithConfig(context.Background(), f.config(t, func(c *Config) { c.Budget = b; c.MaxConns = 1 }))
		if err != nil {
			t.Fatal(err)
		}
		c, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		c.Release()
		f.silent.Store(true)
		start := time.Now()
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			p.Close()
		}()
		// Fake time: this waits for nothing real, and the margin only
		// keeps a Close that never returns from hanging the test.
		select {
		case <-closed:
		case <-time.After(closeTimeout + time.Minute):
			t.Fatalf("Close on a silent server had not returned after %s, want %s at most", time.Since(start), closeTimeout)
		}
		if took := time.Since(start); took > closeTimeout {
			t.Errorf("Close took %s on a silent server, want %s at most", took, closeTimeout)
		}
		if s := b.Stats(); s.InUse != 0 {
			t.Errorf("the budget still counts %d permit(s) after Close", s.InUse)
		}
	})
}
