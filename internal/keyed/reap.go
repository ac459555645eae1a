package keyed

import (
	"context"
	"time"
)

// idleNote is a pool an eviction found idle, asking Config.Idle outside
// the set's lock: its key and entry, and the entry's enters when noted.
type idleNote[K comparable, P any] struct {
	key    K
	e      *Entry[P]
	enters uint64
}

// lookIdleLocked notes the pools no caller is in, asks Config.Idle of each
// with mu released, and returns, with mu held again, those it found idle.
// At thousands of pools Idle is most of an eviction's time, which every
// other key's Enter and Exit would otherwise spend waiting for the lock.
func (s *Set[K, P]) lookIdleLocked() []idleNote[K, P] {
	notes := make([]idleNote[K, P], 0, len(s.pools))
	for k, e := range s.pools {
		if e.users == 0 && e.ok {
			notes = append(notes, idleNote[K, P]{key: k, e: e, enters: e.enters})
		}
	}
	if len(notes) == 0 {
		return nil
	}
	s.mu.Unlock()
	idle := notes[:0]
	for _, n := range notes {
		if s.cfg.Idle(n.e.pool) {
			idle = append(idle, n)
		}
	}
	s.mu.Lock()
	return idle
}

// evictLocked closes the least recently used of the pools lookIdleLocked
// found idle (looked) to make room for a new one, and reports whether
// there was one. A pool gets a lease or a waiter only from a caller
// between Enter and Exit: one that no caller has entered since it was
// noted, none being in it then, is as idle as Idle saw it. The rest may
// have been leased after Idle looked, or closed, or evicted for another
// key.
func (s *Set[K, P]) evictLocked(looked []idleNote[K, P]) bool {
	var oldest *idleNote[K, P]
	for i := range looked {
		n := &looked[i]
		if s.pools[n.key] != n.e || n.e.enters != n.enters {
			continue
		}
		if oldest == nil || n.e.lastUsed.Before(oldest.e.lastUsed) {
			oldest = n
		}
	}
	if oldest == nil {
		return false
	}
	delete(s.pools, oldest.key)
	s.closeInBackground(oldest.e.pool)
	return true
}

// closeInBackground closes a pool the set dropped, without holding up the
// reaper; Close waits for it, and so does the next pool made (see
// closing). Called under mu.
func (s *Set[K, P]) closeInBackground(p P) {
	done := make(chan struct{})
	s.closing[done] = struct{}{}
	s.bg.Go(func() {
		_ = s.cfg.Close(context.Background(), p)
		s.mu.Lock()
		delete(s.closing, done)
		s.mu.Unlock()
		close(done)
	})
}

// reaper closes pools idle for IdleTimeout. It looks every quarter of
// IdleTimeout, so a pool closes between IdleTimeout and 1.25 times it after
// it was last used. A pool counts as idle from the later of its last Exit
// and the first look that found it idle: a pool with no caller may still
// have leases out (a Lease outlives Acquire), and the set cannot see
// when they come back.
func (s *Set[K, P]) reaper() {
	defer close(s.reapd)
	t := time.NewTicker(max(s.cfg.IdleTimeout/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		s.Sweep(time.Now())
	}
}

// Sweep closes the pools idle for IdleTimeout at now, as the reaper does
// on each look; a benchmark calls it to time a look, and what it costs
// the Enter and Exit of every key, which wait for the set's lock.
//
// Config.Idle reads each pool's own state, which at thousands of pools is
// most of a sweep's time, so Sweep asks it outside the lock: it notes the
// pools no caller is in, asks Idle of each, and takes the lock again to
// act on the answers. A pool gets a lease or a waiter only from a caller
// between Enter and Exit, and Exit restarts its idle time (idleSince back
// to zero, which this sweep cannot close from): a pool closed here had no
// caller since the sweep before, and none while Idle looked.
func (s *Set[K, P]) Sweep(now time.Time) {
	if s.cfg.IdleTimeout <= 0 {
		return // pools are kept until Close
	}
	type look struct {
		key  K
		e    *Entry[P]
		idle bool
	}
	s.mu.Lock()
	looks := make([]look, 0, len(s.pools))
	for k, e := range s.pools {
		if e.users == 0 && e.ok {
			looks = append(looks, look{key: k, e: e})
		} else {
			e.idleSince = time.Time{}
		}
	}
	s.mu.Unlock()
	for i := range looks {
		looks[i].idle = s.cfg.Idle(looks[i].e.pool)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range looks {
		e := l.e
		if !l.idle || e.users != 0 {
			e.idleSince = time.Time{}
			continue
		}
		if e.idleSince.IsZero() {
			e.idleSince = now
		}
		since := e.idleSince
		if e.lastUsed.After(since) {
			since = e.lastUsed
		}
		// The pool may have been evicted, or the set closed, while Idle
		// looked: then it is closed or closing already.
		if now.Sub(since) >= s.cfg.IdleTimeout && s.pools[l.key] == e {
			delete(s.pools, l.key)
			s.closeInBackground(e.pool)
		}
	}
}
