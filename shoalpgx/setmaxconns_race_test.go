package shoalpgx

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

// TestSetMaxConnsRacingCallsAgree: SetMaxConns calls racing each other
// leave the pool at the n of the one that takes effect last, and every
// part of it agrees: with Pipeline, its whole and its shared connections
// hold that n's halves, not one call's half and another's; its read pool,
// which follows its MaxConns, holds the same n. The test server is a
// primary, which the read pool falls back to. Four calls a round, since
// the race is short.
func TestSetMaxConnsRacingCallsAgree(t *testing.T) {
	for _, depth := range []int{0, 4} {
		t.Run(fmt.Sprintf("Pipeline %d", depth), func(t *testing.T) {
			p := newTestPool(t, func(c *Config) { c.MaxConns, c.Pipeline = 20, depth })
			reads := p.Reads()
			sizes := []int32{4, 7, 10, 13}
			const rounds = 2000
			for round := range rounds {
				start := make(chan struct{})
				var wg sync.WaitGroup
				for _, n := range sizes {
					wg.Go(func() {
						<-start
						if err := p.SetMaxConns(n); err != nil {
							t.Error(err)
						}
					})
				}
				close(start)
				wg.Wait()
				got := agreedMaxConns(t, p, "the pool")
				if !slices.Contains(sizes, got) {
					t.Fatalf("round %d of %d: the pool's MaxConns %d is none of the calls' %v", round, rounds, got, sizes)
				}
				if r := agreedMaxConns(t, reads.p, "the read pool"); r != got {
					t.Fatalf("round %d of %d: the read pool's MaxConns %d, the pool's %d", round, rounds, r, got)
				}
			}
		})
	}
}

// agreedMaxConns returns p's MaxConns as Stat reports it, failing the test
// when p pipelines and its two kinds of connection do not hold that
// limit's halves (the odd one to the whole connections).
func agreedMaxConns(t *testing.T, p *Pool, what string) int32 {
	t.Helper()
	n := p.Stat().MaxConns()
	if p.pipe == nil {
		return n
	}
	whole, shared := p.core.Stats().MaxConns, p.pipe.core.Stats().MaxConns
	if shared != int(n)/2 || whole != int(n)-shared {
		t.Fatalf("%s's MaxConns is %d, its whole connections' limit %d and its shared ones' %d: not that limit's halves", what, n, whole, shared)
	}
	return n
}
