package shoal

// serveHeldUp gives the waiters streams on connections with room that
// Config.Avoid reports held up, once the pool can no longer open the
// connection they were left to wait for (mayOpenAnother): a dial failed
// and the pool backs off, say, while the server refuses new connections.
// take leaves a caller who could wait to that new connection; without this
// it would wait until a stream freed or its context ended, behind nothing
// but a connection that never comes, where one arriving now takes the
// held-up connection at once.
func (m *muxEngine[T]) serveHeldUp() {
	p := m.p
	if p.cfg.Avoid == nil || p.hot.waiters.Load() == 0 {
		return
	}
	m.mu.Lock()
	var out []delivery[T]
	for p.hot.waiters.Load() > 0 {
		leases := 0
		var best *conn[T]
		for _, c := range m.conns {
			leases += c.mux.streams
			if c.retiredFor() != 0 || c.mux.streams >= c.mux.limit {
				continue
			}
			if best == nil || c.mux.streams < best.mux.streams {
				best = c
			}
		}
		if best == nil || p.mayOpenAnother(leases, inQueue) {
			break
		}
		// One with room that is not held up first, as take would pick it:
		// Avoid may have changed its mind since the waiters looked.
		if best.mux.streams > 0 && p.callAvoid(best.value) {
			if alt := m.unavoidedLocked(best, 0, len(m.conns)); alt != nil {
				best = alt
			}
		}
		w := p.wq.popOldest()
		if w == nil {
			break
		}
		out = append(out, delivery[T]{w: w, l: m.takeStreamLocked(best)})
	}
	m.mu.Unlock()
	deliver(out)
}
