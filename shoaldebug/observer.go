package shoaldebug

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
)

// keptLeaks is how many leak reports a pool keeps, newest first: enough to
// see whether one function leaks again and again, few enough that a pool
// leaking on every request keeps a small page.
const keptLeaks = 8

// Observer is a shoal.Observer that records, for the page, what a pool's
// Stats does not keep: the acquire-wait histogram, the last dial error and
// the recent leak reports with their stacks. It is a shoal.StatsAttacher:
// shoal.New registers the pool under the Observer's name, and the pool's
// close removes it. Use one Observer per pool.
type Observer struct {
	shoal.BaseObserver
	name  string
	reg   *Registry
	waits histogram
	// holders is the pool's Holders method (AttachHolders).
	holders atomic.Pointer[func() []shoal.Holder]

	mu      sync.Mutex
	dialErr *DialError
	leaks   []Leak // newest first
}

// DialError is the last dial that failed.
type DialError struct {
	Error string    `json:"error"` // the dial's error, as its Error method says it
	At    time.Time `json:"at"`    // when the Observer heard of it
}

// Leak is one leak report: a lease held past Config.LeakThreshold.
type Leak struct {
	At        time.Time     `json:"at"`        // when it was reported
	Held      time.Duration `json:"held_ns"`   // how long the lease had been held then
	Function  string        `json:"function"`  // the function that acquired it
	Stack     string        `json:"stack"`     // its stack at Acquire
	Reclaimed bool          `json:"reclaimed"` // LeakReclaim took the connection back
}

// NewObserver returns an Observer that lists its pool on the default
// registry's page under name; an empty name means the pool's own
// (shoal.Config.Name, or the one the pool made up), so that
// NewObserver("") is enough for a pool that has a Name.
func NewObserver(name string) *Observer { return Default.NewObserver(name) }

// NewObserver returns an Observer that lists its pool on r's page under
// name.
func (r *Registry) NewObserver(name string) *Observer {
	return &Observer{name: name, reg: r}
}

// Attach registers the pool; shoal.New calls it, and the pool calls the
// detach function it returns once it is closed.
func (o *Observer) Attach(stats func() shoal.Stats) (detach func()) {
	return o.reg.add(o.name, stats, o)
}

// ObserveAcquire counts the wait in the histogram.
func (o *Observer) ObserveAcquire(wait time.Duration) { o.waits.observe(wait) }

// ObserveDial keeps the error of a failed dial.
func (o *Observer) ObserveDial(_ time.Duration, err error) {
	if err == nil {
		return
	}
	e := &DialError{Error: err.Error(), At: time.Now()}
	o.mu.Lock()
	o.dialErr = e
	o.mu.Unlock()
}

// ObserveLeak keeps the report, dropping the oldest beyond keptLeaks.
func (o *Observer) ObserveLeak(r shoal.LeakReport) {
	l := Leak{At: time.Now(), Held: r.Held, Function: r.Function, Stack: r.Stack, Reclaimed: r.Reclaimed}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.leaks) == keptLeaks {
		o.leaks = o.leaks[:keptLeaks-1]
	}
	o.leaks = append([]Leak{l}, o.leaks...)
}

// recorded is a copy of what the Observer holds.
func (o *Observer) recorded() (waits []Bucket, dialErr *DialError, leaks []Leak) {
	waits = o.waits.snapshot()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dialErr != nil {
		e := *o.dialErr
		dialErr = &e
	}
	return waits, dialErr, append([]Leak(nil), o.leaks...)
}
