package shoalpgx

import (
	"context"
	"errors"
)

// A pool whose target falls back (prefer-standby, the read pool) uses the
// primary only while no standby qualifies. Once one does again, its
// connections to the primary are closed, idle ones at their next acquire
// and the others on release, and the new ones go to the standby: without
// that, a pool that fell back during a standby's restart would stay on the
// primary for as long as its connections lived.

// isFallback reports whether a connection to a server with role r is one
// the pool's target uses only for want of a better host.
func (p *Pool) isFallback(r role) bool {
	return p.target.fallsBack() && errors.Is(p.target.judge(r, p.maxLag), errFallback)
}

// probeFallback, run every RoleCheckPeriod while the pool holds fallback
// connections, connects to the hosts as a dial would, accepting only a
// host that qualifies. When one does, the connection is closed and every
// host the pool uses as a fallback is retired. Each probe costs a dial
// round (a connection to each host tried, at most), and only while the
// pool is on its fallback. A pool under a Budget does not probe: the
// probe's connection would be one the budget never granted.
func (p *Pool) probeFallback() {
	if p.fallbackOpen.Load() == 0 || p.config.Budget != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), roleCheckTimeout)
	defer cancel()
	cc, err := p.connConfig(ctx)
	if err != nil {
		return
	}
	d, _, err := p.connectFirst(ctx, hostConfigs(cc), false)
	if err != nil {
		return
	}
	d.host.open.Add(-1)
	closeCtx, cancelClose := context.WithTimeout(context.Background(), closeTimeout)
	_ = d.conn.Close(closeCtx)
	cancelClose()
	for _, h := range p.hosts.all() {
		if r, seen, _ := h.lastLook(); seen && p.isFallback(r) {
			h.retire()
		}
	}
}
