package observewrap_test

import (
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/observewrap"
)

// Attach and AttachHolders reach the wrapped Observer's, and the detach
// they return is its own: without them a metrics collector would read no
// gauges and the live page would list no pool.
func TestWrapPassesAttachmentsOn(t *testing.T) {
	o := &tracer{}
	w := observewrap.Wrap(o, observewrap.Options{})
	sa, ok := w.(shoal.StatsAttacher)
	if !ok {
		t.Fatalf("%T is no StatsAttacher", w)
	}
	ha, ok := w.(shoal.HoldersAttacher)
	if !ok {
		t.Fatalf("%T is no HoldersAttacher", w)
	}
	detachStats := sa.Attach(func() shoal.Stats { return shoal.Stats{Leases: 3} })
	detachHolders := ha.AttachHolders(func() []shoal.Holder { return []shoal.Holder{{AcquiredBy: "main.f"}} })
	stats, holders := o.attached()
	if stats == nil || stats().Leases != 3 {
		t.Errorf("the wrapped Observer was not given the pool's Stats")
	}
	if holders == nil || len(holders()) != 1 || holders()[0].AcquiredBy != "main.f" {
		t.Errorf("the wrapped Observer was not given the pool's holders")
	}
	detachStats()
	detachHolders()
	if o.detached != 2 {
		t.Errorf("the wrapped Observer was detached %d times, want 2", o.detached)
	}
}

// A wrapped Observer that attaches nothing leaves a wrapper whose Attach
// and AttachHolders return a detach the pool can call.
func TestWrapOfAnObserverThatAttachesNothing(t *testing.T) {
	w := observewrap.Wrap(&counter{}, observewrap.Options{})
	if a, ok := w.(shoal.StatsAttacher); !ok {
		t.Errorf("%T is no StatsAttacher", w)
	} else {
		a.Attach(func() shoal.Stats { return shoal.Stats{} })()
	}
	if a, ok := w.(shoal.HoldersAttacher); !ok {
		t.Errorf("%T is no HoldersAttacher", w)
	} else {
		a.AttachHolders(func() []shoal.Holder { return nil })()
	}
}

// Options.Stats changes every read the wrapped Observer makes, each read
// the pool's Stats of that moment.
func TestWrapStatsChangesEveryRead(t *testing.T) {
	o := &attacher{}
	leases := 1
	w := observewrap.Wrap(o, observewrap.Options{Stats: func(s shoal.Stats) shoal.Stats {
		s.Leases += 10
		return s
	}})
	w.(shoal.StatsAttacher).Attach(func() shoal.Stats { return shoal.Stats{Leases: leases} })
	stats, _ := o.attached()
	if got := stats().Leases; got != 11 {
		t.Errorf("first read: %d leases, want 11", got)
	}
	leases = 2
	if got := stats().Leases; got != 12 {
		t.Errorf("second read: %d leases, want 12", got)
	}
}

// slowDials is an Observer that adds a second to every dial before the
// Observer it embeds hears of it.
type slowDials struct{ shoal.Observer }

func (s slowDials) ObserveDial(took time.Duration, err error) {
	s.Observer.ObserveDial(took+time.Second, err)
}

// Options.Events hears the events: the event it changes reaches the
// wrapped Observer changed, the others as they are.
func TestWrapEventsHearsTheEvents(t *testing.T) {
	o := &attacher{}
	w := observewrap.Wrap(o, observewrap.Options{Events: slowDials{o}})
	w.ObserveDial(time.Millisecond, nil)
	w.ObserveAcquire(0)
	if len(o.dials) != 1 || o.dials[0] != time.Second+time.Millisecond || o.acquires != 1 {
		t.Errorf("dials %v and %d acquires heard, want [1.001s] and 1", o.dials, o.acquires)
	}
	if _, ok := w.(shoal.StatsAttacher); !ok {
		t.Errorf("with Options.Events, %T is no StatsAttacher", w)
	}
}

// There is nothing to wrap in nil, and a nil Observer is what a pool
// without one is given.
func TestWrapNil(t *testing.T) {
	if w := observewrap.Wrap(nil, observewrap.Options{Events: slowDials{}}); w != nil {
		t.Errorf("Wrap(nil) = %T, want nil", w)
	}
	if e := observewrap.Events(nil); e != nil {
		t.Errorf("Events(nil) = %T, want nil", e)
	}
}
