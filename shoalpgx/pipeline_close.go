package shoalpgx

import (
	"context"
)

// Closing a pool whose shared connections still carry statements that
// their callers gave up on. Such a statement runs on at the server and
// holds its connection's lease until it is answered, and Close waits for
// leases; a pg_sleep(3600) abandoned a second in would hold Close for an
// hour where pgxpool, which cancels a statement its caller gives up on,
// would return at once. So once the pool is closing, a shared connection
// on which no caller waits sends the server a cancel request and closes:
// nothing on it has anyone to answer.

// dropAbandoned cancels what the server runs on the connection and breaks
// it, when statements are pending on it and none has a caller waiting.
// The cancel request hits no caller's statement: every one pending is
// abandoned, and the closing pool lets no new one in (only a caller that
// acquired the connection before Close, still on its way to sending, could
// join in the moment between, and it fails as on a closed connection).
// Breaking the connection ends the abandoned statements' leases, which
// lets the pool's Close return.
func (c *pipeConn) dropAbandoned() {
	if !c.abandoned() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	_ = c.pc.conn.PgConn().CancelRequest(ctx)
	cancel()
	c.fail(errPipeClosed)
}

// abandoned reports whether statements are pending on the connection and
// none has a caller waiting for it.
func (c *pipeConn) abandoned() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || len(c.pending) == 0 {
		return false
	}
	for _, r := range c.pending {
		if r.onDone == nil && r.state.Load() == reqWaiting {
			return false
		}
	}
	return true
}
