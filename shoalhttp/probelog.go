package shoalhttp

import "context"

// The lines about an origin's probes are logged outside origin.mu, so that
// a slow log handler holds up only the request that logs; they are counted
// so that Close can still wait for them.

// startLine counts a line about to be logged outside o.mu. o.mu must be
// held.
func (o *origin) startLine() {
	if o.logging == 0 {
		o.loggedAll = make(chan struct{})
	}
	o.logging++
}

// endLine counts a line logged.
func (o *origin) endLine() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.logging--; o.logging == 0 {
		close(o.loggedAll)
	}
}

// waitLines waits for the lines being logged, or for ctx. On a shut-down
// origin no line starts after it looks: noteProbe logs nothing once
// shutDown is set.
func (o *origin) waitLines(ctx context.Context) error {
	o.mu.Lock()
	done := o.loggedAll
	if o.logging == 0 {
		done = nil
	}
	o.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
