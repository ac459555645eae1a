package shoaldebug

import (
	"time"

	"github.com/shoalpool/shoal"
)

// keptHolders is how many holders the page lists, the longest held first:
// a multiplexed pool can hold thousands of leases, and the oldest are the
// ones an operator looks for.
const keptHolders = 32

// Holder is one lease a pool holds now: how long it has been held and the
// function that took it (shoal.Holder).
type Holder struct {
	Held       time.Duration `json:"held_ns"`               // how long it has been held
	AcquiredBy string        `json:"acquired_by,omitempty"` // with Config.LeakThreshold or tracing only
}

// AttachHolders keeps the pool's Holders method for the page; shoal.New
// calls it, and the pool calls the detach function it returns once it is
// closed.
func (o *Observer) AttachHolders(holders func() []shoal.Holder) (detach func()) {
	o.holders.Store(&holders)
	return func() { o.holders.CompareAndSwap(&holders, nil) }
}

// heldNow lists the pool's holders, the longest held first, at most
// keptHolders of them; nil before the pool attached its Holders.
func (o *Observer) heldNow() []Holder {
	h := o.holders.Load()
	if h == nil {
		return nil
	}
	all := (*h)()
	out := make([]Holder, 0, min(len(all), keptHolders))
	for _, x := range all[:min(len(all), keptHolders)] {
		out = append(out, Holder{Held: x.Held, AcquiredBy: x.AcquiredBy})
	}
	return out
}
