package shoalpgx

import (
	"context"
	"errors"
	"time"

	"github.com/shoalpool/shoal"
)

// The look again at a host's role, for a pool whose target a host can stop
// meeting while the pool holds its connections: a standby promoted under
// target_session_attrs=standby or read-only, a standby that falls behind
// MaxStandbyLag in the read pool. A writable pool learns of a move from
// its dials and refused writes, and looks at an idle connection in the
// background (hosts_failover.go, hosts_watch.go).

// rechecks reports whether a pool on t looks at its hosts again at acquire.
func rechecks(t target, period time.Duration) bool {
	return period > 0 && t.checksRole() && !t.writable()
}

// admitHost reports whether pc's host still qualifies, as far as the pool
// knows: a connection to a host retired since it was dialled is closed,
// and when the host was last looked at more than RoleCheckPeriod ago, one
// acquire (this one, when no other is looking) asks pc's server again. On
// false pc has been closed.
func (p *Pool) admitHost(ctx context.Context, pc *pooledConn) bool {
	h := pc.host
	if why := pc.stale(); why != 0 {
		pc.lease.DiscardFor(why)
		return false
	}
	if !p.recheck || time.Now().UnixNano()-h.checkedAt.Load() < int64(p.config.RoleCheckPeriod) {
		return true
	}
	if !h.checking.CompareAndSwap(false, true) {
		return true
	}
	defer h.checking.Store(false)
	ctx, cancel := context.WithTimeout(ctx, roleCheckTimeout)
	r, err := p.readRole(ctx, pc.conn.PgConn())
	cancel()
	if err != nil {
		if !pc.conn.IsClosed() && !pc.conn.PgConn().IsBusy() {
			// The caller gave up between the two readings of a lag check:
			// the connection is fine, and its host is judged later.
			pc.releaseUnused()
			return false
		}
		// A connection that cannot answer this cannot serve the caller
		// either; its host is judged by the next one.
		pc.lease.DiscardFor(shoal.ReasonHealth)
		return false
	}
	h.noteRole(r, time.Now())
	pc.role, pc.judged = r, true
	pc.setFallback(p.isFallback(r)) // a standby promoted becomes a fallback, a primary demoted stops being one
	if err := p.target.judge(r, p.maxLag); err != nil && !(p.target.fallsBack() && errors.Is(err, errFallback)) {
		h.retire()
		pc.lease.DiscardFor(shoal.ReasonRetired)
		return false
	}
	return true
}

// stale says why pc is to take no more statements, or 0: its host was
// retired (hostState.retire) since pc was dialled, or the pool was reset
// since (Reset). pc is closed at its next acquire or release. (The core's
// Reset closes a connection whose dial was under way at it as it lands,
// before anyone could acquire it.)
func (pc *pooledConn) stale() shoal.Reason {
	switch {
	case pc.hostEpoch != pc.host.epoch.Load():
		return shoal.ReasonRetired
	case pc.resetGen != pc.pool.resets.Load():
		return shoal.ReasonReset
	}
	return 0
}
