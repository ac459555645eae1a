package shoal

import (
	"errors"
	"fmt"
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
)

// AcquireError says why an Acquire failed after waiting, what it waited for,
// and for how long. It wraps the cause (a context error, ErrClosed,
// ErrExhausted or a dial error), so errors.Is(err, context.DeadlineExceeded)
// and the like work.
type AcquireError struct {
	Err      error         // the cause
	Waited   time.Duration // how long the caller waited
	MaxConns int           // the pool's MaxConns
	InUse    int           // connections with at least one lease when it failed
	Waiting  int           // callers waiting when it failed (including this one)
	Dialing  int           // dials in flight when it failed
	LastDial error         // the most recent dial error, if the last dial failed
}

// Error says what the acquire waited for and why it ended: "shoal:
// acquire: context deadline exceeded after 2s waiting for one of 16
// connections (16 in use, 31 waiting)", and the last dial's error when
// the last dial failed.
func (e *AcquireError) Error() string {
	var b strings.Builder
	b.WriteString("shoal: acquire: ")
	b.WriteString(strings.TrimPrefix(e.Err.Error(), "shoal: "))
	fmt.Fprintf(&b, " after %s waiting for one of %d connections (%d in use, %d waiting",
		roundDuration(e.Waited), e.MaxConns, e.InUse, e.Waiting)
	if e.Dialing > 0 {
		fmt.Fprintf(&b, ", %d dialing", e.Dialing)
	}
	b.WriteString(")")
	if e.LastDial != nil && !errors.Is(e.Err, e.LastDial) {
		b.WriteString("; last dial failed: ")
		b.WriteString(e.LastDial.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *AcquireError) Unwrap() error { return e.Err }

// dialError marks a dial failure: errors.Is matches both ErrDial and the
// dial's own error.
type dialError struct{ err error }

func (e *dialError) Error() string   { return "shoal: dial failed: " + e.err.Error() }
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
