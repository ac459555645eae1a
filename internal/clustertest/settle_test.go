//go:build unix

package clustertest

import (
	"testing"
	"time"
)

// settleStall and settleBound bound the waits for what takes dials to
// PostgreSQL and the processes' turns on the CPU: workers joining, holding
// their shares, coming back online. A loaded machine makes those as slow as
// it likes, so such a wait fails only once the workers have stopped moving
// (none changed its connections, dials, share or view of the budget for
// settleStall), or, moving or not, after settleBound. The times measured
// are logged either way.
const (
	settleStall = 10 * time.Second
	settleBound = 90 * time.Second
)

// settle polls cond every 20ms until it holds, and returns how long it
// took. Unlike waitFor's, its window follows the workers in ps rather than
// the clock: it fails with cond's last word once none of them has moved
// for settleStall, or after settleBound.
func settle(t *testing.T, ps []*proc, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	lastMove := start
	seen := make([]move, len(ps))
	for i, p := range ps {
		seen[i] = moveOf(p.last())
	}
	for {
		ok, detail := cond()
		if ok {
			return time.Since(start)
		}
		now := time.Now()
		for i, p := range ps {
			if m := moveOf(p.last()); m != seen[i] {
				seen[i], lastMove = m, now
			}
		}
		switch {
		case now.Sub(lastMove) > settleStall:
			t.Fatalf("%s: not after %v, the last %v of it with no worker moving: %s", what, now.Sub(start).Round(time.Millisecond), settleStall, detail)
		case now.Sub(start) > settleBound:
			t.Fatalf("%s: not within %v, though the workers kept moving: %s", what, settleBound, detail)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// move is what of a worker's report counts as it moving: its connections
// and dials, its share and its view of the budget. Queries are left out:
// a busy worker serves them whether or not it moves towards what a test
// waits for.
type move struct {
	open, dialing, share, fair, held, members int
	dials, dialErrors, fenced, connects       int64
	closed                                    int64
	joined, online, reported                  bool
}

// moveOf returns r's move.
func moveOf(r Report) move {
	m := move{
		open: r.Open, dialing: r.Dialing, share: r.Share, fair: r.Fair, held: r.Held, members: r.Members,
		dials: r.Dials, dialErrors: r.DialErrors, fenced: r.Fenced, connects: r.Connects,
		joined: r.Joined, online: r.Online, reported: r.At != 0,
	}
	for _, n := range r.Closed {
		m.closed += n
	}
	return m
}
