package poolmetrics

import (
	"sync/atomic"
	"testing"

	"github.com/shoalpool/shoal"
)

// TestSourcesBargeMissesNeverFall: the gauges of sources that share a name
// add up; BargeMisses, a counter, adds up too, and a source that detaches
// leaves its last count behind, so that the sum never falls.
func TestSourcesBargeMissesNeverFall(t *testing.T) {
	var s Sources
	if total, ok := s.Gauges(); ok || total.BargeMisses != 0 {
		t.Fatalf("no source: Gauges() = %+v, %v; want zero and false", total, ok)
	}
	var oldMisses, newMisses atomic.Int64
	oldMisses.Store(2)
	newMisses.Store(3)
	detachOld := s.Attach(func() shoal.Stats { return shoal.Stats{IdleConns: 1, BargeMisses: oldMisses.Load()} })
	s.Attach(func() shoal.Stats { return shoal.Stats{IdleConns: 2, BargeMisses: newMisses.Load()} })
	check := func(when string, idle int, misses int64, attached bool) {
		t.Helper()
		total, ok := s.Gauges()
		if total.IdleConns != idle || total.BargeMisses != misses || ok != attached {
			t.Errorf("%s: IdleConns %d, BargeMisses %d, ok %v; want %d, %d, %v", when, total.IdleConns, total.BargeMisses, ok, idle, misses, attached)
		}
	}
	check("both attached", 3, 5, true)
	oldMisses.Store(4)
	check("old source missed twice more", 3, 7, true)
	oldMisses.Store(5) // a miss after the last scrape: detach reads it
	detachOld()
	detachOld() // twice does nothing
	check("old source detached", 2, 8, true)
	oldMisses.Store(9) // no longer read
	newMisses.Store(5)
	check("new source missed twice more", 2, 10, true)
}
