package main

import (
	"errors"
	"testing"
	"time"
)

// measure times the first acknowledged write and full throughput from the
// promotion's start, counting only writes begun after it, and counts the
// failures.
func TestMeasure(t *testing.T) {
	ms := time.Millisecond
	o := &outcome{faultAt: 3000 * ms, downAt: 3100 * ms, promotedAt: 3300 * ms, writes: make([][]write, 1)}
	add := func(start, end time.Duration, err error) {
		o.writes[0] = append(o.writes[0], write{seq: len(o.writes[0]) + 1, start: start, end: end, err: err})
	}
	// 100 writes/s from 0 to the fault.
	for at := 0 * ms; at < 3000*ms; at += 10 * ms {
		add(at, at+10*ms, nil)
	}
	// In flight at the fault, answered after it: not the new primary's.
	add(2995*ms, 3150*ms, nil)
	add(3000*ms, 5000*ms, errors.New("timeout 1"))
	add(3000*ms, 5000*ms, errors.New("timeout 2"))
	// The new primary answers from 3500ms, at the old rate.
	for at := 3490 * ms; at < 6000*ms; at += 10 * ms {
		add(at, at+10*ms, nil)
	}
	f := measure(o, spec{})
	if f.failed != 2 || f.failedBeforeFault != 0 || f.acked != 300+1+251 {
		t.Fatalf("failed %d (%d before the fault), acked %d", f.failed, f.failedBeforeFault, f.acked)
	}
	if len(f.errs) != 1 || f.errs[0].n != 2 {
		t.Fatalf("errors %v, want one message counted twice (digits made N)", f.errs)
	}
	if f.firstAck != 400*ms {
		t.Fatalf("first ack %v after the promotion's start, want 400ms", f.firstAck)
	}
	// 90% of 100/s over 500ms is 45 writes: reached by the window that ends
	// 450ms after the first ack.
	if f.full < 800*ms || f.full > 900*ms {
		t.Fatalf("full throughput %v after the promotion's start, want 800-900ms", f.full)
	}
	if f.stop != 100*ms || f.promotion != 200*ms {
		t.Fatalf("stop %v, promotion %v; want 100ms, 200ms", f.stop, f.promotion)
	}
}

// A run in which the new primary never answers says so.
func TestMeasureNever(t *testing.T) {
	o := &outcome{faultAt: time.Second + time.Millisecond, downAt: 2 * time.Second, promotedAt: 2 * time.Second, writes: [][]write{{
		{seq: 1, start: 0, end: time.Second, err: nil},
		{seq: 2, start: time.Second, end: 3 * time.Second, err: errors.New("deadline")},
	}}}
	f := measure(o, spec{})
	if f.firstAck != never || f.full != never {
		t.Fatalf("first ack %v, full %v; want never", f.firstAck, f.full)
	}
	if ms(f.firstAck) != "not in the run" {
		t.Fatalf("never prints as %q", ms(f.firstAck))
	}
}
