package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// measureReads sorts reads into before the fault, during the failover and
// after the promotion, counts who answered and what failed, and counts the
// answers the pair's roles rule out.
func TestMeasureReads(t *testing.T) {
	ms := time.Millisecond
	o := &outcome{faultAt: 3000 * ms, downAt: 3100 * ms, promotedAt: 3300 * ms, primary: 5441, standby: 5442, reads: make([][]read, 2)}
	add := func(r int, start, end time.Duration, port int, standby bool, err error) {
		o.reads[r] = append(o.reads[r], read{start: start, end: end, port: port, standby: standby, err: err})
	}
	// Before the fault: 10 on the standby, 2 fallen back to the primary.
	for i := range 10 {
		at := time.Duration(i) * 100 * ms
		add(0, at, at+ms, 5442, true, nil)
	}
	add(1, 0, ms, 5441, false, nil)
	add(1, 10*ms, 11*ms, 5441, false, nil)
	// During: the standby before and after it left recovery, one in
	// flight at the fault that failed, one begun before the promotion's
	// end and answered after it.
	add(0, 3000*ms, 3001*ms, 5442, true, nil)
	add(0, 3200*ms, 3201*ms, 5442, false, nil)
	add(1, 2999*ms, 5000*ms, 0, false, errors.New("timeout after 2000 ms"))
	add(0, 3299*ms, 3301*ms, 5442, false, nil)
	// After: 5 on the new primary, 2 failures with one message (digits
	// made N), and the old primary's port answering, which cannot be.
	for i := range 5 {
		at := 3300*ms + time.Duration(i)*100*ms
		add(0, at, at+ms, 5442, false, nil)
	}
	add(1, 5000*ms, 7000*ms, 0, false, errors.New("timeout after 2000 ms"))
	add(1, 7000*ms, 9000*ms, 0, false, errors.New("timeout after 2001 ms"))
	add(1, 9000*ms, 9001*ms, 5441, false, nil)

	f := measureReads(o)
	if want := (phaseReads{answered: 12, byStandby: 10}); f.before != want {
		t.Errorf("before the fault %+v, want %+v", f.before, want)
	}
	if want := (phaseReads{answered: 3, byStandby: 1, failed: 1}); f.during != want {
		t.Errorf("during the failover %+v, want %+v", f.during, want)
	}
	if want := (phaseReads{answered: 6, failed: 2}); f.after != want {
		t.Errorf("after the promotion %+v, want %+v", f.after, want)
	}
	if f.unexpected != 1 {
		t.Errorf("unexpected answers %d, want 1 (the old primary's after the promotion)", f.unexpected)
	}
	if len(f.errs) != 1 || f.errs[0].n != 3 || !strings.Contains(f.errs[0].msg, "N ms") {
		t.Errorf("errors %v, want one message counted 3 times, digits made N", f.errs)
	}
}

// Before the fault only the pair's healthy roles are expected: its
// primary's port answering as a standby, or another port, is counted.
func TestMeasureReadsUnexpectedBefore(t *testing.T) {
	o := &outcome{faultAt: time.Second, promotedAt: 2 * time.Second, primary: 5441, standby: 5442, reads: [][]read{{
		{start: 0, end: time.Millisecond, port: 5441, standby: true},
		{start: 0, end: time.Millisecond, port: 5443, standby: false},
		{start: 0, end: time.Millisecond, port: 5442, standby: true},
	}}}
	if f := measureReads(o); f.unexpected != 2 || f.before.answered != 3 || f.before.byStandby != 2 {
		t.Fatalf("%+v: want 3 answered, 2 by a standby, 2 unexpected", f)
	}
}

// In a rejoin run the reads begun once Rejoin had returned are a phase of
// their own, the old primary may answer as a standby from when it has
// started (before Rejoin returns), and the first read a standby answered
// after the promotion is timed from Rejoin's start, the promotion's end.
func TestMeasureReadsRejoin(t *testing.T) {
	ms := time.Millisecond
	o := &outcome{fault: rejoin, faultAt: 3000 * ms, downAt: 3100 * ms, promotedAt: 3300 * ms, rejoinedAt: 7000 * ms,
		primary: 5441, standby: 5442, reads: make([][]read, 2)}
	add := func(r int, start, end time.Duration, port int, standby bool, err error) {
		o.reads[r] = append(o.reads[r], read{start: start, end: end, port: port, standby: standby, err: err})
	}
	// After the promotion, before Rejoin returned: the new primary, then
	// the old primary started as a standby, then a read begun before the
	// return and answered after it (still this phase), and the old
	// primary as a primary, which cannot be.
	add(0, 3400*ms, 3401*ms, 5442, false, nil)
	add(1, 3000*ms, 3200*ms, 5442, true, nil) // during the failover: not timed
	add(0, 6500*ms, 6501*ms, 5441, true, nil)
	add(1, 6400*ms, 6600*ms, 5441, true, nil) // begun first, ended later
	add(1, 6999*ms, 7300*ms, 5441, true, nil)
	add(1, 6000*ms, 6001*ms, 5441, false, nil)
	// After the rejoin: two on the new primary, one failure, then the
	// rejoined standby.
	add(0, 7000*ms, 7001*ms, 5442, false, nil)
	add(0, 7100*ms, 7101*ms, 5442, false, nil)
	add(0, 7200*ms, 9200*ms, 0, false, errors.New("timeout"))
	add(0, 9300*ms, 9301*ms, 5441, true, nil)
	add(1, 7400*ms, 8250*ms, 5441, true, nil)
	// The old primary answering as a primary after the rejoin cannot be.
	add(1, 9500*ms, 9501*ms, 5441, false, nil)

	f := measureReads(o)
	if want := (phaseReads{answered: 5, byStandby: 3}); f.after != want {
		t.Errorf("after the promotion %+v, want %+v", f.after, want)
	}
	if want := (phaseReads{answered: 5, byStandby: 2, failed: 1}); f.rejoined != want {
		t.Errorf("after the rejoin %+v, want %+v", f.rejoined, want)
	}
	if f.firstStandby != 3201*ms {
		t.Errorf("first read by a standby %v after the rejoin began, want 3201ms", f.firstStandby)
	}
	if want := (phaseReads{answered: 1, byStandby: 1}); f.during != want {
		t.Errorf("during the failover %+v, want %+v", f.during, want)
	}
	if f.unexpected != 2 {
		t.Errorf("unexpected answers %d, want 2 (the old primary as a primary, before and after the rejoin)", f.unexpected)
	}
}

// Outside a rejoin run nothing is counted after the rejoin, the old
// primary answering as a standby after the promotion cannot be, and no
// standby read is timed.
func TestMeasureReadsNoRejoin(t *testing.T) {
	o := &outcome{fault: stopped, faultAt: time.Second, promotedAt: 2 * time.Second, primary: 5441, standby: 5442, reads: [][]read{{
		{start: 3 * time.Second, end: 3 * time.Second, port: 5441, standby: true},
		{start: 3 * time.Second, end: 3 * time.Second, port: 5442, standby: false},
	}}}
	f := measureReads(o)
	if f.rejoined != (phaseReads{}) || f.after.answered != 2 || f.unexpected != 1 || f.firstStandby != never {
		t.Fatalf("%+v: want 2 after the promotion, 1 unexpected, none after a rejoin", f)
	}
}

func TestShare(t *testing.T) {
	for _, c := range []struct {
		n, all int
		want   string
	}{{0, 0, "n/a"}, {0, 4, "0.0%"}, {1, 3, "33.3%"}, {5, 5, "100.0%"}} {
		if got := share(c.n, c.all); got != c.want {
			t.Errorf("share(%d, %d) = %q, want %q", c.n, c.all, got, c.want)
		}
	}
}
