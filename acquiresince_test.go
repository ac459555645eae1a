package shoal

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// sinceRecorder records the waits the Observer hears of and traces.
type sinceRecorder struct {
	recordingTracer
	waitsMu  sync.Mutex
	waits    []time.Duration // ObserveAcquire
	timeouts []time.Duration // ObserveTimeout
}

func (r *sinceRecorder) ObserveAcquire(w time.Duration) {
	r.waitsMu.Lock()
	defer r.waitsMu.Unlock()
	r.waits = append(r.waits, w)
}

func (r *sinceRecorder) ObserveTimeout(w time.Duration) {
	r.waitsMu.Lock()
	defer r.waitsMu.Unlock()
	r.timeouts = append(r.timeouts, w)
}

// observed returns and forgets the acquire waits and timeouts heard of.
func (r *sinceRecorder) observed() (waits, timeouts []time.Duration) {
	r.waitsMu.Lock()
	defer r.waitsMu.Unlock()
	waits, timeouts = r.waits, r.timeouts
	r.waits, r.timeouts = nil, nil
	return waits, timeouts
}

// An AcquireSince counts its caller's wait from since wherever the
// connection comes from: one free at once, one released while it waits
// in the queue, and a wait its context ends. The Observer, the WaitTracer
// (whose span starts at since) and Stats all see it; a zero since is a
// plain Acquire.
func TestAcquireSinceCountsTheWaitBeforeIt(t *testing.T) {
	for _, streams := range []int{1, 2} {
		synctest.Test(t, func(t *testing.T) {
			rec := &sinceRecorder{}
			p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxStreams: streams, Observer: rec})
			var held []Lease[*fakeConn]
			for range streams {
				held = append(held, mustAcquire(t, p))
			}
			for _, l := range held {
				l.Release()
			}
			rec.observed()
			rec.taken()
			before := p.Stats()

			const earlier = 30 * time.Millisecond
			since := time.Now()
			time.Sleep(earlier)
			l, err := p.AcquireSince(context.Background(), since)
			if err != nil {
				t.Fatal(err)
			}
			waits, _ := rec.observed()
			calls := rec.taken()
			if len(waits) != 1 || waits[0] != earlier {
				t.Errorf("streams %d, served at once: ObserveAcquire heard %v, want [%v]", streams, waits, earlier)
			}
			if len(calls) != 1 || !calls[0].start.Equal(since) || calls[0].wait != earlier || calls[0].err != nil {
				t.Errorf("streams %d, served at once: traced %+v, want one wait of %v from %v", streams, calls, earlier, since)
			}
			if s := p.Stats(); s.WaitedAcquires-before.WaitedAcquires != 1 || s.WaitTime-before.WaitTime != earlier {
				t.Errorf("streams %d, served at once: Stats counted %d waited acquires for %v, want 1 for %v",
					streams, s.WaitedAcquires-before.WaitedAcquires, s.WaitTime-before.WaitTime, earlier)
			}

			// Full: the next one waits in the queue until a release.
			for range streams - 1 {
				held = append(held[:0], mustAcquire(t, p))
			}
			rec.observed()
			rec.taken()
			const queued = 20 * time.Millisecond
			since = time.Now()
			time.Sleep(earlier)
			go func() {
				time.Sleep(queued)
				l.Release()
			}()
			l2, err := p.AcquireSince(context.Background(), since)
			if err != nil {
				t.Fatal(err)
			}
			waits, _ = rec.observed()
			calls = rec.taken()
			if len(waits) != 1 || waits[0] != earlier+queued {
				t.Errorf("streams %d, queued: ObserveAcquire heard %v, want [%v]", streams, waits, earlier+queued)
			}
			if len(calls) != 1 || !calls[0].start.Equal(since) || calls[0].wait != earlier+queued {
				t.Errorf("streams %d, queued: traced %+v, want one wait of %v from %v", streams, calls, earlier+queued, since)
			}

			// Its context ends while it waits.
			since = time.Now()
			time.Sleep(earlier)
			ctx, cancel := context.WithTimeout(context.Background(), queued)
			_, err = p.AcquireSince(ctx, since)
			cancel()
			var ae *AcquireError
			if !errors.As(err, &ae) || ae.Waited != earlier+queued {
				t.Errorf("streams %d, timed out: %v, want an AcquireError that waited %v", streams, err, earlier+queued)
			}
			if _, timeouts := rec.observed(); len(timeouts) != 1 || timeouts[0] != earlier+queued {
				t.Errorf("streams %d, timed out: ObserveTimeout heard %v, want [%v]", streams, timeouts, earlier+queued)
			}
			rec.taken()

			// A zero since: a plain Acquire, served at once, untraced.
			l2.Release()
			for _, h := range held[:streams-1] {
				h.Release()
			}
			l3, err := p.AcquireSince(context.Background(), time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			l3.Release()
			if waits, _ := rec.observed(); len(waits) != 1 || waits[0] != 0 {
				t.Errorf("streams %d, zero since: ObserveAcquire heard %v, want [0]", streams, waits)
			}
			if calls := rec.taken(); len(calls) != 0 {
				t.Errorf("streams %d, zero since: traced %+v, want nothing", streams, calls)
			}
		})
	}
}
