package shoal

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Sentinel errors. Errors returned by the pool wrap them, so test with
// errors.Is.
var (
	// ErrClosed: the pool is closed, or was closed while the caller waited.
	ErrClosed = errors.New("shoal: pool closed")
	// ErrExhausted: the wait queue is full (MaxWaiters), or load shedding
	// (QueueTarget) dropped the caller.
	ErrExhausted = errors.New("shoal: pool exhausted")
	// ErrWouldBlock: TryAcquire found no connection free.
	ErrWouldBlock = errors.New("shoal: no connection free")
	// ErrDial: a dial (or the OnConnect hook after it) failed. The dial's
	// own error is wrapped beside it.
	ErrDial = errors.New("shoal: dial failed")
	// ErrLeaseReclaimed: the lease was taken back by LeakReclaim.
	ErrLeaseReclaimed = errors.New("shoal: lease reclaimed after being held past LeakThreshold")
	// ErrLeaseReleased: Lease.Hijack on a lease already released,
	// discarded, hijacked or reclaimed.
	ErrLeaseReleased = errors.New("shoal: lease already released")
	// ErrHijackShared: Lease.Hijack on a multiplexed connection that other
	// leases still use.
	ErrHijackShared = errors.New("shoal: cannot hijack a connection other leases still use")
	// ErrPermanent marks a dial error that no retry can mend: a password
	// the server refuses, a database or role that does not exist, a
	// certificate the client rejects. Dial marks its errors with Permanent.
	ErrPermanent = errors.New("shoal: permanent dial failure")
	// ErrPermitRefused marks a dial error that says the connection's
	// budget permit was refused, not that the server failed: shoalpgx's
	// fence found the permit's slot still held at the server by another
	// process. The pool dials again with another permit after a short
	// backoff, and such failures never count towards the server being
	// down, so callers with time left wait for that dial instead of
	// getting the error at once.
	ErrPermitRefused = errors.New("shoal: budget permit refused")
)

// Permanent marks err, a dial's error, as one that no retry can mend. The
// pool then fails its callers with it at once, instead of letting them wait
// for another try, and retries only every few seconds while the cause lasts
// (see Config.Dial). errors.Is(err, ErrPermanent) reports the mark; err
// itself stays visible to errors.Is and errors.As. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil || errors.Is(err, ErrPermanent) {
		return err
	}
	return &permanentError{err: err}
}

// permanentError is Permanent's mark; its text is err's.
type permanentError struct{ err error }

func (e *permanentError) Error() string   { return e.err.Error() }
func (e *permanentError) Unwrap() []error { return []error{ErrPermanent, e.err} }

// AcquireError says why an Acquire failed, what it waited for, and for how
// long. It wraps the cause (a context error, ErrClosed, ErrExhausted or a
// dial error), so errors.Is(err, context.DeadlineExceeded) and the like
// work.
type AcquireError struct {
	Pool     string        // the pool's name (Config.Name)
	Err      error         // the cause
	Waited   time.Duration // how long the caller waited; 0 when it failed at once
	MaxConns int           // the pool's limit on open connections
	InUse    int           // connections with at least one lease when it failed
	// Waiting is how many callers were waiting when it failed, this one
	// included when it had joined the queue.
	Waiting  int
	Dialing  int   // dials in flight when it failed
	LastDial error // the most recent dial error, if the last dial failed
	// Exhausted says who held the connections, when the acquire's
	// context ended while every one of them was held; nil otherwise.
	Exhausted *Exhaustion
	// Budget names the pool's Budget when it held the pool back (its
	// share was below the pool's own MaxConns, or a dial waited for a
	// permit), so that a wait on other pools is not read as a slow
	// server; empty otherwise, and then Share and PermitWaits are 0.
	Budget      string
	Share       int // the pool's share of Budget when it failed
	PermitWaits int // the pool's dials waiting for a permit of Budget when it failed
}

// Error names the pool, says why the acquire ended, then what it waited
// for and how long and, when every connection was held, who held them:
// `shoal pool "orders": acquire: context deadline exceeded (waited 2s for
// one of 16 connections: 16 in use, 31 waiting); every connection held: 16
// leases (an Observer or LeakThreshold would say for how long)`.
// A dial's error is the cause's own text, so the wait is never read as the
// dial's: `shoal pool "orders": acquire: dial failed: dial tcp
// 127.0.0.1:5432: connect: connection refused (waited 0s for one of 4
// connections: 0 in use, 1 waiting)`. When the last dial failed and that
// is not the cause, its error follows. When the pool's Budget held it
// back, the budget's part follows the wait: `...); budget "tenants" lets
// the pool hold 0 now`.
func (e *AcquireError) Error() string {
	var b strings.Builder
	writePrefix(&b, e.Pool)
	b.WriteString("acquire: ")
	b.WriteString(strings.TrimPrefix(e.Err.Error(), "shoal: "))
	if e.MaxConns == 1 {
		fmt.Fprintf(&b, " (waited %s for its one connection: %d in use, %d waiting",
			roundDuration(e.Waited), e.InUse, e.Waiting)
	} else {
		fmt.Fprintf(&b, " (waited %s for one of %d connections: %d in use, %d waiting",
			roundDuration(e.Waited), e.MaxConns, e.InUse, e.Waiting)
	}
	if e.Dialing > 0 {
		fmt.Fprintf(&b, ", %d dialing", e.Dialing)
	}
	b.WriteString(")")
	if e.Budget != "" {
		fmt.Fprintf(&b, "; budget %q lets the pool hold %d now", e.Budget, e.Share)
		switch e.PermitWaits {
		case 0:
		case 1:
			b.WriteString(", and 1 dial waits for its permit")
		default:
			fmt.Fprintf(&b, ", and %d dials wait for their permits", e.PermitWaits)
		}
	}
	if e.Exhausted != nil {
		b.WriteString("; ")
		b.WriteString(e.Exhausted.String())
	}
	if e.LastDial != nil && !errors.Is(e.Err, e.LastDial) {
		b.WriteString("; last dial failed: ")
		b.WriteString(dialCause(e.LastDial).Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *AcquireError) Unwrap() error { return e.Err }

// CloseError says what Pool.Close was still waiting for when its context
// ended: leases not yet released, connections still closing, dials still
// in flight. It wraps the context's error. The pool stays closed, and what
// is left closes as its leases end.
type CloseError struct {
	Pool    string // the pool's name (Config.Name)
	Err     error  // the context's error
	Held    int    // leases still held
	Closing int    // connections whose Close is still running
	Dialing int    // dials still in flight
	// OldestHeld is how long the longest-held lease had been held, when
	// the pool tracks holding (an Observer or LeakThreshold is set).
	OldestHeld time.Duration
	// HeldBy is the function that acquired that lease, when the pool
	// records it: with LeakThreshold or tracing (an Observer that is a
	// WaitTracer) on.
	HeldBy string
}

// Error names the pool and says why Close gave up and what it waited for:
// `shoal pool "orders": close: context deadline exceeded with 3 leases
// still held (the oldest for 12.5s, acquired by main.handleReport)`.
func (e *CloseError) Error() string {
	var b strings.Builder
	writePrefix(&b, e.Pool)
	fmt.Fprintf(&b, "close: %v with %d %s still held", e.Err, e.Held, plural(e.Held, "lease", "leases"))
	if e.OldestHeld > 0 || e.HeldBy != "" {
		b.WriteString(" (the oldest")
		if e.OldestHeld > 0 {
			fmt.Fprintf(&b, " for %s", roundDuration(e.OldestHeld))
		}
		if e.HeldBy != "" {
			fmt.Fprintf(&b, ", acquired by %s", e.HeldBy)
		}
		b.WriteString(")")
	}
	if e.Closing > 0 {
		fmt.Fprintf(&b, ", %d %s closing", e.Closing, plural(e.Closing, "connection", "connections"))
	}
	if e.Dialing > 0 {
		fmt.Fprintf(&b, ", %d %s in flight", e.Dialing, plural(e.Dialing, "dial", "dials"))
	}
	return b.String()
}

// Unwrap returns the context's error.
func (e *CloseError) Unwrap() error { return e.Err }

// writePrefix starts a pool's error: `shoal pool "orders": `, or "shoal: "
// for an error made without a pool's name. Adapters that restate the
// message swap "shoal" for their own package's name.
func writePrefix(b *strings.Builder, pool string) {
	if pool == "" {
		b.WriteString("shoal: ")
		return
	}
	b.WriteString("shoal pool ")
	b.WriteString(strconv.Quote(pool))
	b.WriteString(": ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// dialError marks a dial failure: errors.Is matches both ErrDial and the
// dial's own error.
type dialError struct{ err error }

func (e *dialError) Error() string { return "shoal: dial failed: " + e.err.Error() }

// dialCause returns the error a dial returned, without the ErrDial mark
// that its text would otherwise repeat after "last dial failed".
func dialCause(err error) error {
	if de, ok := err.(*dialError); ok {
		return de.err
	}
	return err
}
func (e *dialError) Unwrap() []error { return []error{ErrDial, e.err} }

// roundDuration keeps error messages readable: 2s, 1.5ms, not 2.000183412s.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}

// panicError turns a recovered panic into an error.
type panicError struct {
	where string
	value any
}

func (e *panicError) Error() string { return fmt.Sprintf("shoal: %s panicked: %v", e.where, e.value) }
