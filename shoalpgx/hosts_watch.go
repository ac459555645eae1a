package shoalpgx

import (
	"context"
	"time"
)

// roleCheckTimeout bounds one look: a server too slow to answer this is one
// the stuck callers and the dial's stagger deal with.
const roleCheckTimeout = 2 * time.Second

// watchRole looks, every RoleCheckPeriod, at the role of the server behind
// one idle connection (roleQuery, hosts_role.go), for a pool whose connection
// string asks for a writable host among several; and for a pool that fell
// back to the primary for want of a standby, whether one qualifies again
// (probeFallback, hosts_fallback.go). When the host no longer qualifies the
// pool resets before any caller's write is refused with SQLSTATE 25006 (a
// write is what noteErr, in hosts_failover.go, waits for). Only an idle
// connection is looked at, and only one, taken without a dial
// (TryAcquireIdle): a busy pool learns from its writes soon enough, and
// the look must not make the pool grow.
func (p *Pool) watchRole(period time.Duration) {
	defer close(p.roleDone)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-p.roleStop:
			return
		case <-t.C:
			if p.resetOnReadOnly {
				p.checkRole()
			}
			if p.target.fallsBack() {
				p.probeFallback()
			}
		}
	}
}

// checkRole runs roleQuery on one idle connection (with Pipeline, a
// shared one when no whole one is idle) and resets the pool when
// its server no longer qualifies for the pool's target: for read-write,
// when it no longer takes writes; for primary, when it is in recovery (a
// primary fenced read-only is still one, as in libpq, and a reset would
// only dial it again). A connection dialled before the pool's last reset
// is retired already, and its answer says nothing new.
func (p *Pool) checkRole() {
	lease, err := p.core.TryAcquireIdle()
	if err != nil {
		if p.pipe != nil {
			p.pipe.checkRole() // no idle whole connection: a shared one, then
		}
		return
	}
	pc := lease.Value()
	pc.lease = lease
	// The query below is the look at the connection that a ping would
	// have been; what a background look noted is moot.
	pc.idle, pc.mustPing = 0, false
	gen := pc.resetGen
	if p.beforeRoleQuery != nil {
		p.beforeRoleQuery()
	}
	ctx, cancel := context.WithTimeout(context.Background(), roleCheckTimeout)
	r, err := p.readRole(ctx, pc.conn.PgConn())
	cancel()
	if err == nil {
		pc.host.noteRole(r, time.Now())
	}
	pc.releaseUnused() // closes it if the query left it unusable
	if err == nil && p.target.judge(r, 0) != nil && gen == p.resets.Load() {
		p.Reset()
	}
}
