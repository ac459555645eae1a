package shoal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Holder is one lease held now, as Pool.Holders lists it.
type Holder struct {
	// Held is how long the lease has been held. The pool times holding
	// only when it has an Observer or a LeakThreshold; without either it
	// is 0.
	Held time.Duration
	// AcquiredBy is the function that acquired the lease (the first
	// caller outside shoal and its adapters), when the pool records it:
	// with LeakThreshold set (each acquire's stack is kept) or with
	// tracing on (an Observer that is a WaitTracer: each acquire keeps the
	// frames up to that caller). Otherwise "".
	AcquiredBy string
}

// Holders returns the leases held now, the longest held first. It is for
// pages and error reports, not for a hot path: it visits every
// connection. With neither an Observer nor a LeakThreshold the pool does
// not time holding, and the holders come with no age, in no order.
func (p *Pool[T]) Holders() []Holder {
	now := p.now()
	held := p.eng.heldLeases()
	out := make([]Holder, 0, len(held))
	for _, r := range held {
		h := Holder{AcquiredBy: r.acquiredBy()}
		if at := r.acquiredAt.Load(); at != 0 && p.feat.trackHeld {
			h.Held = time.Duration(max(now-at, 0))
		}
		out = append(out, h)
	}
	slices.SortStableFunc(out, func(a, b Holder) int { return cmp.Compare(b.Held, a.Held) })
	return out
}

// HoldersAttacher is an optional interface of an Observer that lists the
// pool's holders (shoaldebug's page does). shoal.New calls AttachHolders
// with the pool's Holders method, after Attach when the Observer is also a
// StatsAttacher, and the pool calls the function it returns once it is
// closed and drained.
type HoldersAttacher interface {
	// AttachHolders hands the Observer the pool's Holders method and
	// returns what the pool calls to take it back once it is drained.
	AttachHolders(holders func() []Holder) (detach func())
}

// AttachHolders forwards to every member that is a HoldersAttacher.
func (m multiObserver) AttachHolders(holders func() []Holder) func() {
	var detaches []func()
	for _, o := range m {
		if a, ok := o.(HoldersAttacher); ok {
			detaches = append(detaches, a.AttachHolders(holders))
		}
	}
	return func() {
		for _, d := range detaches {
			if d != nil {
				d()
			}
		}
	}
}

// attachHolders gives an Observer that wants them the pool's Holders, and
// makes the pool's detach call undo it too.
func (p *Pool[T]) attachHolders(obs Observer) {
	a, ok := obs.(HoldersAttacher)
	if !ok {
		return
	}
	detach, prev := a.AttachHolders(p.Holders), p.life.detachObs
	p.life.detachObs = func() {
		if prev != nil {
			prev()
		}
		if detach != nil {
			detach()
		}
	}
}

// Exhaustion explains an acquire whose context ended while every
// connection was held: who held them. An AcquireError carries one then.
type Exhaustion struct {
	// Held is how many leases were held when the acquire gave up.
	Held int
	// Timed reports whether the pool times holding (an Observer or
	// LeakThreshold is set); without it Longer and Oldest are unknown.
	Timed bool
	// Longer is how many of them had been held longer than the acquire
	// waited: they were already held when it began to wait, and none was
	// released to it.
	Longer int
	// Oldest is how long the longest-held lease had been held.
	Oldest time.Duration
	// OldestBy is the function that acquired that lease, when the pool
	// records it: with LeakThreshold or tracing (an Observer that is a
	// WaitTracer) on.
	OldestBy string
}

// String says who held the pool: "every connection held: 4 leases, 4 of
// them for longer than this wait; the oldest for 12.5s, acquired by
// main.handleReport".
func (x *Exhaustion) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "every connection held: %d %s", x.Held, plural(x.Held, "lease", "leases"))
	if !x.Timed {
		b.WriteString(" (an Observer or LeakThreshold would say for how long)")
		return b.String()
	}
	fmt.Fprintf(&b, ", %d of them for longer than this wait; the oldest for %s", x.Longer, roundDuration(x.Oldest))
	if x.OldestBy != "" {
		fmt.Fprintf(&b, ", acquired by %s", x.OldestBy)
	}
	return b.String()
}

// exhaustion explains a wait that ended with its context while every
// connection was held, or returns nil when the pool was not exhausted
// by its holders then (connections were idle, or dials failed or were
// still under way). It runs for every such timeout, many at once when a
// pool is overloaded, so it visits the held leases once and formats only
// the oldest one's stack.
func (p *Pool[T]) exhaustion(err error, waited time.Duration, inUse, maxConns int) *Exhaustion {
	if inUse < maxConns || !(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		return nil
	}
	held := p.eng.heldLeases()
	if len(held) == 0 {
		return nil
	}
	x := &Exhaustion{Held: len(held), Timed: p.feat.trackHeld}
	if !x.Timed {
		return x
	}
	now := p.now()
	var oldest *leaseRecord[T]
	for _, r := range held {
		at := r.acquiredAt.Load()
		if at == 0 {
			continue
		}
		age := time.Duration(max(now-at, 0))
		if age > waited {
			x.Longer++
		}
		if oldest == nil || age > x.Oldest {
			oldest, x.Oldest = r, age
		}
	}
	if oldest != nil {
		x.OldestBy = oldest.acquiredBy()
	}
	return x
}
