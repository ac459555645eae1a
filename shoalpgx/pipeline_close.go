package shoalpgx

import (
	"context"
	"time"
)

// Closing a pool whose shared connections still carry statements that
// their callers gave up on. Such a statement runs on at the server and
// holds its connection's lease until it is answered, and Close waits for
// leases; a pg_sleep(3600) abandoned a second in would hold Close for an
// hour where pgxpool, which cancels a statement its caller gives up on,
// would return at once. So once the pool is closing, a shared connection
// on which no caller waits has the server cancel what it runs, until
// nothing is left unanswered, and then closes as an idle one does.
//
// Closing the socket alone would not stop the statement: a backend
// notices that its client has gone only when it next reads or writes, an
// hour later for that pg_sleep. And one cancel request is not enough: a
// request that reaches the backend between two statements is dropped
// (see cancel.go), and the next abandoned statement then runs on.

// dropAbandoned has the server cancel what it runs on the connection, for
// as long as statements are pending on it and none has a caller waiting:
// a cancel request, and another every cancelRetry until the server has
// answered them all, CancelTimeout at most after the first; then it
// returns, leaving the connection idle for the pool's Close. A server that
// has not answered them by then has the connection broken instead, which
// ends their leases (and leaves what it runs to run on). The cancel
// requests hit no caller's statement: every one pending is abandoned, and
// the closing pool lets no new one in. Only a caller that acquired the
// connection before Close, still on its way to sending, could join in the
// moment between; its statement stays queued until the server has
// answered (see cancelAbandoned), and fails with the connection if the
// server never does.
//
// One goroutine at a time does the cancelling: a call while it runs (a
// second caller giving up during Close) makes it look again before it
// returns, and returns at once.
func (c *pipeConn) dropAbandoned() {
	n := c.drops.Add(1)
	if n > 1 {
		return
	}
	for {
		c.cancelAbandoned()
		if c.drops.Add(-n) == 0 {
			return
		}
		n = c.drops.Load()
	}
}

// cancelAbandoned is dropAbandoned's work, one goroutine at a time. From
// its first cancel request until it returns, what callers send stays
// queued (cancelling): a request written while a cancel request is out
// could be the statement the server stops. So only its first look can
// find a caller's statement written, and then it sends nothing; a later
// look finds what it cancels, less what the server has answered, and it
// returns once that is nothing, or breaks the connection at
// CancelTimeout. Then the queue goes out; on a connection broken instead,
// nothing of it was written, so each caller's statement goes to another
// connection while the pool is open (pipePool.run), and fails with the
// connection while it closes.
func (c *pipeConn) cancelAbandoned() {
	defer c.endCancelling()
	var deadline time.Time
	for sent := false; ; sent = true {
		drained := c.abandoned()
		if drained == nil {
			return
		}
		// The first request has closeTimeout to reach the server, as a
		// close has; those after it share what is left of CancelTimeout.
		wait := closeTimeout
		if sent {
			if wait = time.Until(deadline); wait <= 0 {
				c.fail(errPipeClosed)
				return
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		_ = c.pc.conn.PgConn().CancelRequest(ctx)
		cancel()
		if !sent {
			deadline = time.Now().Add(c.cancelWait)
		}
		retry := time.NewTimer(min(cancelRetry, max(time.Until(deadline), 0)))
		select {
		case <-drained:
		case <-c.quit:
		case <-retry.C:
		}
		retry.Stop()
	}
}

// abandoned returns, when statements are at the server (written) on the
// connection and none has a caller waiting for it, a channel closed once
// none is (noteDrainedLocked), and nil otherwise: a cancel request could
// stop a caller's statement. When it returns a channel, cancelling is set,
// in the same hold of c.mu that found no caller's statement written, so
// that none is written after.
func (c *pipeConn) abandoned() (drained <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	written := len(c.pending) - len(c.queue)
	if c.err != nil || written == 0 {
		return nil
	}
	for _, r := range c.pending[:written] {
		if r.onDone == nil && r.state.Load() == reqWaiting {
			return nil
		}
	}
	if c.drained == nil {
		c.drained = make(chan struct{})
	}
	c.cancelling = true
	return c.drained
}

// endCancelling lets what callers queued while cancel requests were out
// go, unless the connection broke meanwhile.
func (c *pipeConn) endCancelling() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.cancelling {
		return
	}
	c.cancelling = false
	c.flushLocked()
}

// noteDrainedLocked tells cancelAbandoned and watchQuiet, if they wait,
// that nothing written is pending any more: the server has answered
// everything it was sent. c.mu must be held, and the last written
// request just answered, or taken back into the queue by a write cut
// before a byte of it left (writeLocked). Taking a request out of the
// queue (unqueue) changes nothing written.
func (c *pipeConn) noteDrainedLocked() {
	if c.drained != nil {
		close(c.drained)
		c.drained = nil
	}
}
