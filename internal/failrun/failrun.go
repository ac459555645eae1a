// Package failrun is the memory of a run of failed dials, shared by the
// core pool (its dials) and shoalhttp (an origin's first connection), so
// that both back off on the same schedule and log a server that is down in
// the same words: the wait before the next dial, which doubles and is
// longer for a refusal no retry mends (shoal.ErrPermanent), and the lines
// that say when a run starts, that it lasts, and that it ended.
//
// Times are on the owner's clock: nanoseconds from a point of its choosing,
// never 0, which stands for "never".
package failrun

import "time"

// The wait after a failed dial doubles from BackoffMin up to BackoffMax.
// The cap is low so that a pool is back to strength soon after its server
// returns.
const (
	BackoffMin = 10 * time.Millisecond
	BackoffMax = 200 * time.Millisecond
)

// After a permanent failure (a refused password, an unknown database, a
// certificate the client rejects) the wait runs from PermanentBackoffMin to
// PermanentBackoffMax instead: a retry cannot mend it, and frequent logins
// after a password rotation would be an authentication storm. The cap still
// lets an owner whose credentials were fixed recover within seconds.
const (
	PermanentBackoffMin = time.Second
	PermanentBackoffMax = 10 * time.Second
)

// StreakGap is the longest a dial may start after the previous failure, or
// after the wait that failure set if it ends later, and still count as
// retrying it: the backoff's cap, and as much again for a retry that ran
// late.
const StreakGap = 2 * BackoffMax

// LogEvery bounds the lines about a run: one when it starts, then at most
// one this often while it lasts, and one when a dial succeeds again. A
// server that is down is said once, not at every retry.
const LogEvery = time.Minute

// Run is what an owner remembers of its failed dials since the last
// success. Its owner's lock guards it; the zero Run has no failures.
type Run struct {
	failures  int64         // dials failed since the last success
	since     int64         // when the run's first dial started; 0 when none failed
	lastAt    int64         // when the last failure was recorded
	loggedAt  int64         // when the run was last logged; 0 when it was not
	backoff   time.Duration // the last wait
	until     int64         // before this, no dial should start
	permanent bool          // the last failure was permanent
	err       error         // the last failure's error; nil when none failed
}

// Failure is one failed dial, as Fail records it.
type Failure struct {
	// Err is what the dial returned.
	Err error
	// Permanent says that no retry mends Err (shoal.ErrPermanent).
	Permanent bool
	// Started is when the dial began and At when it failed: a run counts
	// from its first dial's start, since a connect that hung before it
	// failed was failing all along.
	Started, At int64
}

// Fail records f. With backoff, the next dial waits: the wait doubles
// within the bounds of f's kind and Until moves to its end; without, the
// wait already running stands (a caller that was given the error will
// decide for itself). stale reports that f's dial started so long after
// the previous failure, and the wait it set, that it begins a new run:
// nobody needed a dial in between, so the server has not been seen
// failing meanwhile. A stale failure does not restart the count nor the
// log's bound, so that a server that is down and dialled only now and then
// is not announced anew each time. line is what to log about f, if
// anything: the run's start, or a summary once LogEvery has passed since
// the last line.
func (r *Run) Fail(f Failure, backoff bool) (stale bool, line Line) {
	// Measured from the end of the wait too: a permanent failure's retry
	// comes a second or more after it, and is no less a retry.
	stale = f.Started-max(r.lastAt, r.until) > int64(StreakGap)
	if r.since == 0 || stale {
		r.since = f.Started
	}
	r.failures++
	r.lastAt, r.err = f.At, f.Err
	if f.Permanent != r.permanent {
		r.permanent = f.Permanent
		r.backoff = 0 // a new kind of failure starts its own schedule
	}
	if backoff {
		lo, hi := BackoffMin, BackoffMax
		if f.Permanent {
			lo, hi = PermanentBackoffMin, PermanentBackoffMax
		}
		r.backoff = min(max(2*r.backoff, lo), hi)
		r.until = f.At + int64(r.backoff)
	}
	if r.loggedAt != 0 && f.At-r.loggedAt < int64(LogEvery) {
		return stale, Line{}
	}
	r.loggedAt = f.At
	return stale, Line{
		kind: failing, err: f.Err, permanent: f.Permanent, failures: r.failures,
		over: time.Duration(f.At - r.since), retryIn: time.Duration(max(r.until-f.At, 0)),
	}
}

// Succeed ends the run at now, a dial having succeeded, and returns the
// line that says so when the run's start was logged: a reader who saw the
// server go down learns that it is back.
func (r *Run) Succeed(now int64) Line {
	line := Line{}
	if r.loggedAt != 0 {
		line = Line{kind: recovered, failures: r.failures, over: time.Duration(now - r.since)}
	}
	*r = Run{}
	return line
}

// Until is the end of the wait that the last failure started: no dial
// should start before it. 0 when no failure set one.
func (r *Run) Until() int64 { return r.until }

// Err is the last failure's error: nil when no dial failed since the last
// success.
func (r *Run) Err() error { return r.err }

// Permanent reports whether the last failure was one no retry mends.
func (r *Run) Permanent() bool { return r.permanent }
