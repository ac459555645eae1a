package observewrap_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/observewrap"
)

// ctxKey marks the context a traced wait is passed with.
type ctxKey struct{}

// Wrap and Events are WaitTracers exactly when the Observer they wrap
// traces waits, and pass each wait on whole: a pool traces, and pays for
// naming every lease's taker, only when its Observer is one.
func TestTracesOnlyWhenTheWrappedObserverTraces(t *testing.T) {
	wrappers := map[string]func(shoal.Observer) shoal.Observer{
		"Wrap":   func(o shoal.Observer) shoal.Observer { return observewrap.Wrap(o, observewrap.Options{}) },
		"Events": observewrap.Events,
	}
	for name, wrap := range wrappers {
		for _, k := range kinds() {
			wt, ok := wrap(k.o).(shoal.WaitTracer)
			if ok != k.tracing {
				t.Errorf("%s of %s: a WaitTracer %v, want %v", name, k.name, ok, k.tracing)
			}
			if !ok {
				continue
			}
			ctx := context.WithValue(context.Background(), ctxKey{}, name)
			start, failed := time.Unix(1, 0), errors.New("timed out")
			wt.TraceWait(ctx, start, time.Second, failed)
			var got []wait
			switch o := k.o.(type) {
			case *tracer:
				got = o.traced()
			case *switchedTracer:
				got = o.traced()
			}
			if len(got) != 1 || got[0].ctx.Value(ctxKey{}) != name || !got[0].start.Equal(start) ||
				got[0].wait != time.Second || got[0].err != failed {
				t.Errorf("%s of %s: the wrapped Observer traced %+v, want the one wait", name, k.name, got)
			}
		}
	}
}
