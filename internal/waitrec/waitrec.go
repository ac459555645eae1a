// Package waitrec is a test helper: a shoal.Observer that records the
// context of every acquire the pool traced as waiting (shoal.WaitTracer),
// so that an adapter's tests can check the caller's context reaches the
// pool, which is what lets shoalotel put a wait span under the caller's.
package waitrec

import (
	"context"
	"sync"
	"time"

	"github.com/shoalpool/shoal"
)

// Recorder records TraceWait calls. The zero value is ready.
type Recorder struct {
	shoal.BaseObserver
	mu    sync.Mutex
	calls []Call
}

// Call is one TraceWait call.
type Call struct {
	Ctx  context.Context // the acquirer's context, the one a span goes under
	Wait time.Duration   // how long the acquire waited
	Err  error           // nil, or what Acquire returned
}

var _ shoal.WaitTracer = (*Recorder)(nil)

// TraceWait implements shoal.WaitTracer.
func (r *Recorder) TraceWait(ctx context.Context, _ time.Time, wait time.Duration, err error) {
	r.mu.Lock()
	r.calls = append(r.calls, Call{Ctx: ctx, Wait: wait, Err: err})
	r.mu.Unlock()
}

// Carrying returns the calls whose context carries value under key.
func (r *Recorder) Carrying(key, value any) []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Call
	for _, c := range r.calls {
		if c.Ctx.Value(key) == value {
			out = append(out, c)
		}
	}
	return out
}
