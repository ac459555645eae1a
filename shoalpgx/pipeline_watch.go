package shoalpgx

import (
	"context"
	"time"
)

// checkRole is Pool.checkRole on a shared connection, for a pipelined pool
// with no idle whole connection to look at: the statements it runs outside
// transactions all go on shared connections, so a pool that runs only
// those has no whole one, and without this would learn of a fence only
// from a refused write. It takes a stream on a shared connection that has
// room now (never a dial, so the look does not make the pool grow) and
// asks the server by a role query pipelined like any statement.
func (pp *pipePool) checkRole() {
	p := pp.p
	l, err := pp.core.TryAcquireIdle()
	if err != nil {
		return
	}
	c := l.Value()
	if c.quiet.Load() || c.pc.stale() != 0 {
		// Retired, reset, or held up: the next statement's admit closes
		// it, and its answer would say nothing new.
		l.Release()
		return
	}
	gen := c.pc.resetGen
	if p.beforeRoleQuery != nil {
		p.beforeRoleQuery()
	}
	r, err := pp.lookRole(context.Background(), l) // bounded by roleCheckTimeout; ends l
	if err != nil {
		return
	}
	c.pc.host.noteRole(r, time.Now())
	if p.target.judge(r, 0) != nil && gen == p.resets.Load() {
		p.Reset()
	}
}
