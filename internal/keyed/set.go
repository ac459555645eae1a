// Package keyed keeps a pool per key, made on the key's first use, closed
// after it has sat idle a while, and bounded in number: the logic of the
// core's shoal.Group and of shoalpgx's Group, which differ only in the
// pool they keep (a core Pool, a pgx Pool) and in the methods they offer on
// it.
package keyed

import (
	"context"
	"sync"
	"time"
)

// DefaultIdleTimeout is Config.IdleTimeout's default: long enough that a
// key used every few minutes keeps its pool (and its warm connections),
// short enough that a thousand keys used once do not hold their minimums
// in the budget for long.
const DefaultIdleTimeout = 5 * time.Minute

// Config is what a Set needs of its Group: the operations on its pool
// type P, and the bounds on how many it keeps and for how long.
type Config[K comparable, P any] struct {
	// Make makes key's pool, the nth the set has made (n counts from 1,
	// for the Group's default pool names), on a goroutine of its own. ctx
	// is the caller's whose first use of key made the pool, without its
	// cancellation: the pool outlives that call, which may have left.
	// settle waits for the pools the set was closing when key's pool was
	// asked for (the one evicted for it included) and reports whether
	// there were any: they hold their minimums in the budget until their
	// connections have closed, so a Make whose pool the budget refused
	// calls it and tries again. Only then: an unrelated pool slow to
	// close must not hold up a new key's first use. Required.
	Make func(ctx context.Context, key K, n int, settle func() bool) (P, error)
	// Close closes a pool and waits for it within ctx. The set calls it
	// with context.Background for a pool it closes on its own (idle,
	// evicted, made after Close), and with Close's ctx from Close; each
	// later Close of the set calls it again for the pools the first one
	// closed, to wait for them again, so it must take a pool already
	// closed. Required.
	Close func(ctx context.Context, p P) error
	// Idle reports whether p has no lease and no waiter, so that the set
	// may close it: callers inside Enter/Exit the set counts itself. The
	// idle sweep and an eviction ask it without the set's lock held.
	// Required.
	Idle func(p P) bool
	// IdleTimeout closes a pool idle for this long; 0 means
	// DefaultIdleTimeout, negative keeps pools until Close.
	IdleTimeout time.Duration
	// MaxPools bounds how many pools the set keeps; 0 means no bound.
	MaxPools int
	// ErrClosed is what Enter returns once Close has been called: the
	// Group's package's own sentinel, which this package cannot import.
	ErrClosed error
	// Exhausted returns the error of a new key when MaxPools pools are
	// open and none is idle, naming the Group as its package's errors do.
	Exhausted func(maxPools int) error
	// Panicked returns the error the callers waiting for a pool get when
	// Make panicked with v, naming the Group. Required.
	Panicked func(v any) error
	// GaveUp returns the error of a caller whose ctx ended, with err,
	// while its key's pool was being made, naming the Group and wrapping
	// err: ctx's error alone would not say which group, nor that the wait
	// was for a pool rather than a connection. Required.
	GaveUp func(err error) error
}

// Set keeps a pool per key. Its methods are safe for concurrent use.
type Set[K comparable, P any] struct {
	cfg   Config[K, P]
	quit  chan struct{} // closed by Close: stops the reaper
	reapd chan struct{} // closed when the reaper has ended
	// bg counts pools the set closes outside Close, and pools being made
	// (their maker closes one it finds the set closed under), so that
	// Close waits for them.
	bg sync.WaitGroup

	mu    sync.Mutex
	pools map[K]*Entry[P]
	// closing has a channel per pool the set is closing on its own (idle,
	// evicted), closed once its Close returns. A pool gives its minimum
	// back to its budget only then, so a pool about to be made waits for
	// them, or the budget may refuse it for minimums that are leaving.
	closing map[chan struct{}]struct{}
	made    int // pools made: n for Make
	closed  bool
	// shut are the pools the first Close took from pools: each later
	// Close closes them again, which waits for them again, as a pool's
	// own Close does when called again.
	shut []P
}

// Entry is one key's pool, or the pool being made for it, as Enter returns
// it to a caller who then uses Pool and gives it back with Exit.
type Entry[P any] struct {
	ready chan struct{} // closed once pool or err is set
	// deserted is closed when the last caller waiting for the pool being
	// made has left: its maker then waits no longer for pools closing.
	// Nil once closed, or once the pool is made.
	deserted chan struct{}
	// pool and err are written under the set's mu before ready is closed:
	// under mu for the reaper and Pools, after ready for callers.
	pool      P
	err       error
	ok        bool      // pool is made: P has no nil to tell
	users     int       // callers between Enter and Exit now
	lastUsed  time.Time // when the last caller left
	idleSince time.Time // when the reaper first found it idle; zero while busy
	// enters counts the callers that have entered: an eviction that
	// looked at the pool outside the lock closes it only if none has
	// since (evictLocked).
	enters uint64
}

// Pool returns the entry's pool; valid between Enter and Exit.
func (e *Entry[P]) Pool() P { return e.pool }

// New returns an empty set, with the goroutine that closes idle pools
// running until Close. It panics if cfg lacks an operation: that is a
// Group's own mistake, not its user's, whose input the Groups check.
func New[K comparable, P any](cfg Config[K, P]) *Set[K, P] {
	if cfg.Make == nil || cfg.Close == nil || cfg.Idle == nil || cfg.ErrClosed == nil || cfg.Exhausted == nil || cfg.Panicked == nil || cfg.GaveUp == nil {
		panic("keyed: Config needs Make, Close, Idle, ErrClosed, Exhausted, Panicked and GaveUp")
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	s := &Set[K, P]{
		cfg:     cfg,
		quit:    make(chan struct{}),
		reapd:   make(chan struct{}),
		pools:   map[K]*Entry[P]{},
		closing: map[chan struct{}]struct{}{},
	}
	if cfg.IdleTimeout > 0 {
		go s.reaper()
	} else {
		close(s.reapd)
	}
	return s
}

// Enter returns key's entry with the caller counted in it, making the pool
// if key has none; the caller must Exit it once done with its Pool. A
// caller counted in keeps the pool from being closed for idleness or
// evicted while it waits for the pool to be made or for a connection, when
// the pool's own Stats may show nothing yet.
func (s *Set[K, P]) Enter(ctx context.Context, key K) (*Entry[P], error) {
	var (
		e      *Entry[P]
		looked []idleNote[K, P] // the pools an eviction found idle
		tried  bool             // looked is set: an eviction looked once
	)
	s.mu.Lock()
	for {
		if s.closed {
			s.mu.Unlock()
			return nil, s.cfg.ErrClosed
		}
		if e = s.pools[key]; e != nil {
			break
		}
		limit := s.cfg.MaxPools
		if limit <= 0 || len(s.pools) < limit || s.evictLocked(looked) {
			break
		}
		if tried {
			s.mu.Unlock()
			return nil, s.cfg.Exhausted(limit)
		}
		// With mu released while it looks: the pools, the key's own
		// included, may have changed by the time it returns.
		looked, tried = s.lookIdleLocked(), true
	}
	if e != nil {
		e.users++
		e.enters++
		s.mu.Unlock()
	} else {
		s.made++
		e = &Entry[P]{ready: make(chan struct{}), deserted: make(chan struct{}), users: 1}
		s.pools[key] = e
		s.bg.Add(1) // under mu, before Close can set closed and wait on bg
		closing := make([]chan struct{}, 0, len(s.closing))
		for done := range s.closing {
			closing = append(closing, done)
		}
		// On a goroutine of its own, so that this caller waits for it
		// within ctx, as those who come for key while it is made do: Make
		// may take its time (a Config that fetches credentials), and the
		// pool is made all the same for the next caller.
		go s.make(ctx, key, e, s.made, closing, e.deserted)
		s.mu.Unlock()
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		s.Exit(e)
		return nil, s.cfg.GaveUp(ctx.Err())
	}
	if e.err != nil {
		s.Exit(e)
		return nil, e.err
	}
	return e, nil
}

// make makes e, key's pool, the nth, and closes e.ready. ctx is the
// caller's whose first use of key made it, who may have left; closing
// are the pools the set was closing then, and deserted is e.deserted.
func (s *Set[K, P]) make(ctx context.Context, key K, e *Entry[P], n int, closing []chan struct{}, deserted chan struct{}) {
	defer s.bg.Done()
	// Make waits for the pools in closing only when its budget refuses
	// the pool for the minimums they still hold (Config.Make). It waits
	// while any caller waits for this pool, each within its own ctx: not
	// within the first caller's alone, or one that gave up early would
	// have the pool refused to those still willing to wait. It goes on
	// once all have left, for the next caller, or once the set is closed.
	settle := func() bool {
		if len(closing) == 0 {
			return false
		}
	wait:
		for _, done := range closing {
			select {
			case <-done:
			case <-deserted:
				break wait
			case <-s.quit:
				break wait
			}
		}
		closing = nil
		return true
	}
	p, err := s.callMake(ctx, key, n, settle)
	s.mu.Lock()
	e.deserted = nil // made: an Exit has nothing to tell the maker
	closed := s.closed
	e.pool, e.err, e.ok = p, err, err == nil
	if err == nil && closed {
		// The callers waiting for this pool fail as its maker does: the
		// pool is closed below, and none of them may take a connection
		// of it after Close.
		e.err, e.ok = s.cfg.ErrClosed, false
	}
	close(e.ready)
	if err != nil && s.pools[key] == e {
		// The next use of key tries again: the error may be passing.
		delete(s.pools, key)
	}
	s.mu.Unlock()
	if err == nil && closed {
		// Close ran while the pool was made and did not see it; it waits
		// on bg for this close.
		_ = s.cfg.Close(context.Background(), p)
	}
}

// callMake calls Make. A panic in it (in a Group's Config, most likely)
// becomes the pool's error: on the set's own goroutine it would end the
// program, where on the caller's it could have been recovered.
func (s *Set[K, P]) callMake(ctx context.Context, key K, n int, settle func() bool) (p P, err error) {
	defer func() {
		if v := recover(); v != nil {
			var zero P
			p, err = zero, s.cfg.Panicked(v)
		}
	}()
	return s.cfg.Make(context.WithoutCancel(ctx), key, n, settle)
}

// Exit counts a caller out of e, which starts its idle time anew.
func (s *Set[K, P]) Exit(e *Entry[P]) {
	s.mu.Lock()
	e.users--
	if e.users == 0 && e.deserted != nil {
		close(e.deserted)
		e.deserted = nil
	}
	e.lastUsed = time.Now()
	e.idleSince = time.Time{}
	s.mu.Unlock()
}

// Len returns how many pools the set keeps now, those being made included.
func (s *Set[K, P]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pools)
}

// Pools returns the pool of each key open now, leaving out those being
// made, so that a Group can ask each for its Stats outside the set's lock.
func (s *Set[K, P]) Pools() map[K]P {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[K]P, len(s.pools))
	for k, e := range s.pools {
		if e.ok {
			out[k] = e.pool
		}
	}
	return out
}

// Close closes every pool of the set at once with Config.Close(ctx, p),
// and waits for them, for the reaper, and, within ctx, for the pools the
// set closed on its own or was making. It returns the pools' errors, and
// ctx's error apart if ctx ended before the last wait did, for the Group
// to word it. Later Enters fail with Config.ErrClosed. Calling Close
// again waits again: for the pools, closed again, as for the rest.
func (s *Set[K, P]) Close(ctx context.Context) (poolErrs []error, waitErr error) {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.quit)
	}
	for k, e := range s.pools {
		if e.ok {
			s.shut = append(s.shut, e.pool)
		}
		delete(s.pools, k)
	}
	pools := s.shut
	s.mu.Unlock()
	errs := make([]error, len(pools))
	var wg sync.WaitGroup
	for i, p := range pools {
		wg.Go(func() { errs[i] = s.cfg.Close(ctx, p) })
	}
	wg.Wait()
	<-s.reapd
	done := make(chan struct{})
	go func() { s.bg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		waitErr = ctx.Err()
	}
	return errs, waitErr
}
