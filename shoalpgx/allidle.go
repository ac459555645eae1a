package shoalpgx

import "context"

// AcquireAllIdle takes every connection idle in the pool at once, for work
// on all of them (a keep-alive query, a check of each session), as
// pgxpool's does. It never waits and never dials. PrepareConn (or
// BeforeAcquire) runs on each under ctx, and a connection it refuses or
// fails is closed, not returned; there is no ping and no AcquireTracer
// event. Release each Conn as usual. Unlike pgxpool's, these count in the
// statistics as acquires that did not wait. With Pipeline, only the whole
// connections are taken: a shared one is never one caller's, though Stat
// counts it idle while no statement is on it.
func (p *Pool) AcquireAllIdle(ctx context.Context) []*Conn {
	leases := p.core.AcquireAllIdle()
	conns := make([]*Conn, 0, len(leases))
	next := 0 // the leases from here on are not looked at yet
	defer func() {
		if r := recover(); r != nil {
			// PrepareConn panicked (its connection is closed already):
			// give the others back before the panic goes on, or they
			// would stay leased with no one to release them.
			for _, c := range conns {
				c.pc.releaseUnused()
			}
			for _, lease := range leases[next:] {
				pc := lease.Value()
				pc.lease = lease
				pc.releaseUnused()
			}
			panic(r)
		}
	}()
	for next < len(leases) {
		lease := leases[next]
		next++
		pc := lease.Value()
		pc.lease = lease
		// Whatever a background look noted is moot: this holder uses the
		// connection before anyone else acquires it.
		pc.idle, pc.mustPing = 0, false
		if p.prepareConn != nil {
			if ok, err := p.callPrepareConn(ctx, pc); !ok || err != nil {
				lease.Discard()
				continue
			}
		}
		conns = append(conns, pc.newConn(p))
	}
	return conns
}
