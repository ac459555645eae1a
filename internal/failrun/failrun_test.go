package failrun

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

var errDown = errors.New("connection refused")

// The wait doubles within its kind's bounds, starts over when the kind of
// failure changes, and ends with a success.
func TestBackoffSchedule(t *testing.T) {
	var r Run
	now := int64(1)
	fail := func(permanent bool) time.Duration {
		t.Helper()
		now += int64(time.Millisecond)
		r.Fail(Failure{Err: errDown, Permanent: permanent, Started: now, At: now}, true)
		return time.Duration(r.Until() - now)
	}
	for _, step := range []struct {
		permanent bool
		want      time.Duration
	}{
		{false, BackoffMin}, {false, 2 * BackoffMin}, {false, 4 * BackoffMin},
		{false, 8 * BackoffMin}, {false, 16 * BackoffMin}, {false, BackoffMax},
		{true, PermanentBackoffMin}, {true, 2 * PermanentBackoffMin},
		{false, BackoffMin},
	} {
		if got := fail(step.permanent); got != step.want {
			t.Fatalf("a failure (permanent %v) waits %s, want %s", step.permanent, got, step.want)
		}
	}
	r.Succeed(now)
	if r.Until() != 0 || fail(false) != BackoffMin {
		t.Fatalf("after a success: the wait is %s, want %s", time.Duration(r.Until()-now), BackoffMin)
	}
}

// A failure that does not back off leaves the running wait alone.
func TestFailWithoutBackoffKeepsTheWait(t *testing.T) {
	var r Run
	r.Fail(Failure{Err: errDown, Started: 1, At: 1}, true)
	until := r.Until()
	r.Fail(Failure{Err: errDown, Started: 2, At: 2}, false)
	if r.Until() != until {
		t.Fatalf("the wait moved to %d, want %d", r.Until(), until)
	}
}

// A run is logged as it starts, then at most every LogEvery, then as it
// ends. A dial long after the last failure is stale: the run's time counts
// from it, but its count and the log's bound go on, so that a server dialled
// only now and then is not announced anew each time.
func TestRunLines(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	var r Run
	at := int64(1)
	fail := func(after time.Duration) (stale bool) {
		at += int64(after)
		stale, line := r.Fail(Failure{Err: errDown, Started: at, At: at}, true)
		line.Log(logger)
		return stale
	}
	fail(0)
	fail(BackoffMin)
	if stale := fail(LogEvery); !stale {
		t.Error("a failure long after the last is not stale")
	}
	if stale := fail(10 * BackoffMin); stale {
		t.Error("a failure soon after the last is stale")
	}
	r.Succeed(at + int64(time.Second)).Log(logger)
	var msgs []string
	for l := range strings.Lines(buf.String()) {
		_, m, _ := strings.Cut(l, "msg=")
		m, _, _ = strings.Cut(m, " error=")
		m, _, _ = strings.Cut(m, " failures=")
		msgs = append(msgs, m)
	}
	want := []string{`"shoal: dial failed"`, `"shoal: dials still failing"`, `"shoal: dial succeeded again"`}
	if strings.Join(msgs, ",") != strings.Join(want, ",") {
		t.Fatalf("lines %q, want %q:\n%s", msgs, want, buf.String())
	}
	for _, attr := range []string{"failures=3 for=0s retry_in=40ms", "failures=4 after=1.1s"} {
		if !strings.Contains(buf.String(), attr) {
			t.Errorf("the log lacks %s:\n%s", attr, buf.String())
		}
	}
}

// A run whose start was not logged (the owner's logger was off, or the
// run never failed) ends without a line; a nil logger takes none.
func TestQuietLines(t *testing.T) {
	var r Run
	if !r.Succeed(1).Empty() {
		t.Error("a success with no failure before it has a line")
	}
	_, line := r.Fail(Failure{Err: errDown, Started: 1, At: 1}, true)
	line.Log(nil)
	if line.Empty() {
		t.Error("a run's first failure has no line")
	}
}

// Retries of a permanent failure, each at the end of its wait (a second or
// more), are one run: none is stale, and the line a minute on says how
// long the run has lasted.
func TestPermanentRetriesAreOneRun(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	var r Run
	start := int64(1)
	at := start
	for range 12 {
		stale, line := r.Fail(Failure{Err: errDown, Permanent: true, Started: at, At: at}, true)
		if stale {
			t.Fatalf("a retry %s into the run, at the end of its wait, is stale", time.Duration(at-start))
		}
		line.Log(logger)
		at = r.Until() + int64(5*time.Millisecond) // a little late
	}
	if !strings.Contains(buf.String(), `msg="shoal: dials still failing"`) || !strings.Contains(buf.String(), "failures=10 for=1m5.045s") {
		t.Fatalf("no line saying the run has lasted over a minute:\n%s", buf.String())
	}
}

// Err and Permanent are the last failure's, which its owners hand to their
// callers, until a success clears them.
func TestLastFailure(t *testing.T) {
	var r Run
	errAuth := errors.New("password authentication failed")
	r.Fail(Failure{Err: errAuth, Permanent: true, Started: 1, At: 2}, true)
	if r.Err() != errAuth || !r.Permanent() {
		t.Fatalf("after a permanent failure: Err %v, Permanent %v", r.Err(), r.Permanent())
	}
	r.Fail(Failure{Err: errDown, Started: 3, At: 4}, false)
	if r.Err() != errDown || r.Permanent() {
		t.Fatalf("after a failure a retry may mend: Err %v, Permanent %v", r.Err(), r.Permanent())
	}
	r.Succeed(5)
	if r.Err() != nil || r.Permanent() {
		t.Fatalf("after a success: Err %v, Permanent %v", r.Err(), r.Permanent())
	}
}
