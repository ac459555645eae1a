package shoalhttp

// applyLimit gives the origin's backend, if it has one yet, the limit
// Transport.SetMaxConns last stored for the origin. SetMaxConns calls it
// after storing its limit, and the probe after putting a backend in place,
// whose pool may have read the limit before a later store. The read of the
// limit and the resize happen together under limitMu, so that no resize
// with a limit read earlier lands after one with a limit read later: the
// last applyLimit to run, which follows the last store, leaves the pool at
// the limit the origin keeps. Without that, two racing calls could leave
// the pool at one's limit and the origin, and so its later pools, at the
// other's. An error is the pool's: it is closed.
func (o *origin) applyLimit() error {
	o.limitMu.Lock()
	defer o.limitMu.Unlock()
	b := o.current()
	n := o.maxConns.Load()
	if b == nil || n == 0 {
		return nil
	}
	return b.setMaxConns(int(n))
}
