package observewrap_test

import (
	"testing"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/observewrap"
)

// Events passes the events on and attaches nothing: the second pool's
// gauges and holders are not the wrapped Observer's to read.
func TestEventsAttachesNothing(t *testing.T) {
	for _, k := range kinds() {
		e := observewrap.Events(k.o)
		if _, ok := e.(shoal.StatsAttacher); ok {
			t.Errorf("%s: Events is a StatsAttacher", k.name)
		}
		if _, ok := e.(shoal.HoldersAttacher); ok {
			t.Errorf("%s: Events is a HoldersAttacher", k.name)
		}
	}
	o := &tracer{}
	observewrap.Events(o).ObserveAcquire(0)
	if o.acquires != 1 {
		t.Errorf("%d acquires heard through Events, want 1", o.acquires)
	}
}
