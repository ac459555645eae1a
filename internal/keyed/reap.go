package keyed

import (
	"context"
	"time"
)

// idleLocked reports whether e's pool has no caller, lease or waiter.
func (s *Set[K, P]) idleLocked(e *Entry[P]) bool {
	return e.users == 0 && e.ok && s.cfg.Idle(e.pool)
}

// evictLocked closes the least recently used idle pool to make room for a
// new one, and reports whether there was one.
func (s *Set[K, P]) evictLocked() bool {
	var (
		victim K
		oldest *Entry[P]
	)
	for k, e := range s.pools {
		if s.idleLocked(e) && (oldest == nil || e.lastUsed.Before(oldest.lastUsed)) {
			victim, oldest = k, e
		}
	}
	if oldest == nil {
		return false
	}
	delete(s.pools, victim)
	s.closeInBackground(oldest.pool)
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
