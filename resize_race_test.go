package shoal

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// raceSetMaxConns calls p.SetMaxConns with each of ns at once, on a
// goroutine each, and returns when all have returned.
func raceSetMaxConns(t *testing.T, p *Pool[*fakeConn], ns ...int) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, n := range ns {
		wg.Go(func() {
			<-start
			if err := p.SetMaxConns(n); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
}

// TestSetMaxConnsRacingCallsAgree: once two racing SetMaxConns calls have
// returned, Stats reports as MaxConns and Share the limit dials are held
// to, whichever call took effect last.
func TestSetMaxConnsRacingCallsAgree(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 8})
	const rounds = 5000
	for round := range rounds {
		raceSetMaxConns(t, p, 2, 6)
		if s, held := p.Stats(), int(p.cap.limit.Load()); s.MaxConns != held || s.Share != held {
			t.Fatalf("round %d of %d: Stats reports MaxConns %d and Share %d, dials are held to %d", round, rounds, s.MaxConns, s.Share, held)
		}
	}
}

// TestSetMaxConnsRacingCallsLimitInForce: of two SetMaxConns calls racing
// on a pool above both limits, the one Stats reports is the one the pool
// keeps to: it shrinks to it as its leases come back, opens up to it, and
// makes the next caller wait.
func TestSetMaxConnsRacingCallsLimitInForce(t *testing.T) {
	const rounds = 300
	seen := map[int]int{}
	for round := range rounds {
		synctest.Test(t, func(t *testing.T) {
			p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 8})
			var held []Lease[*fakeConn]
			for range 4 {
				held = append(held, mustAcquire(t, p))
			}
			raceSetMaxConns(t, p, 2, 6)
			limit := p.Stats().MaxConns
			seen[limit]++
			for _, l := range held {
				l.Release()
			}
			synctest.Wait()
			if open := d.openConns(); open != min(4, limit) {
				t.Fatalf("round %d: %d open once the leases came back under MaxConns %d, want %d", round, open, limit, min(4, limit))
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			waiters := acquireMany(ctx, p, limit+1)
			wantWaiters(t, p, 1)
			if open := d.openConns(); open != limit {
				t.Fatalf("round %d: %d open with a caller waiting under MaxConns %d", round, open, limit)
			}
			cancel()
			releaseEach(waiters)
		})
	}
	// Not a check: which call takes effect last is the scheduler's choice.
	t.Logf("limits in force after %d rounds: %v", rounds, seen)
}
