package shoalpgx

import "time"

// A shared connection whose server stops answering while the pool is
// open: a path through a firewall that lost its state, an old primary's
// address moved away. Its callers return at their deadlines, each leaving
// its statement behind, and an abandoned statement holds its stream, and
// so the connection's place under MaxConns, until it is answered: never,
// on a silent path whose socket stays open. A whole connection in that
// state is closed after CancelTimeout; a shared one is not closed when a
// caller gives up, as others may wait on it. So when the statement at the
// head of a shared connection is abandoned and nothing has come back for
// CancelTimeout, the connection takes no new statements (admit retires
// it), and once no caller waits on it any more, what it runs is cancelled
// and, if the server does not answer within CancelTimeout, it is broken
// (dropAbandoned), which frees its place; a server that answers was slow,
// not silent, and the connection takes statements again. Callers already
// behind the quiet statement keep waiting within their contexts: on a
// slow server they get their answers. Which of the two it is nobody can
// tell from the client before the cancel request's answer, and a cancel
// request sent while a caller waits could stop that caller's statement
// instead of the abandoned one.

// watchAbandoned looks at the connection after a caller gave up on a
// statement on it, written or still queued (the last caller waiting
// behind a quiet statement may be one whose statement the cork held
// back), while the pool is open. One goroutine at a time watches: a call
// while one does makes it look again before it returns, and returns at
// once.
func (c *pipeConn) watchAbandoned() {
	if c.watches.Add(1) > 1 {
		return
	}
	go func() {
		n := c.watches.Load()
		for {
			c.watchQuiet()
			if c.watches.Add(-n) == 0 {
				return
			}
			n = c.watches.Load()
		}
	}()
}

// watchQuiet is watchAbandoned's work: it waits while the statement at
// the connection's head is abandoned and the server has answered within
// CancelTimeout, and returns once the head has a caller (who has a
// context of its own), nothing is pending, or the connection is quiet.
// A quiet connection is marked so that it takes no new statement; if no
// caller waits on it, its statements are cancelled and it is broken
// unless the server answers (dropAbandoned).
func (c *pipeConn) watchQuiet() {
	for {
		drained, live, ok := c.abandonedHead()
		if !ok {
			// The server has answered what was quiet (or the
			// connection broke): it takes statements again.
			c.quiet.Store(false)
			return
		}
		since := time.Duration(pipeClock() - c.pace.turnAt.Load())
		if since < c.cancelWait {
			t := time.NewTimer(c.cancelWait - since)
			select {
			case <-drained:
			case <-c.quit:
			case <-t.C:
			}
			t.Stop()
			continue
		}
		c.quiet.Store(true)
		if !live {
			c.dropAbandoned()
			if c.broken() == nil {
				c.quiet.Store(false) // the server answered the cancel: slow, not silent
			}
		}
		return
	}
}

// abandonedHead reports, ok, whether the oldest statement at the server
// on the connection has no caller waiting (its caller gave up, or it is a
// preparation); then live tells whether a caller waits on one behind it,
// and drained is closed once nothing is pending (noteDrainedLocked).
func (c *pipeConn) abandonedHead() (drained <-chan struct{}, live, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || len(c.pending) == len(c.queue) || c.pace.atServer.Load() == 0 {
		return nil, false, false
	}
	if head := c.pending[0]; head.onDone == nil && head.state.Load() == reqWaiting {
		return nil, true, false
	}
	for _, r := range c.pending[1:] {
		if r.onDone == nil && r.state.Load() == reqWaiting {
			live = true
			break
		}
	}
	if c.drained == nil {
		c.drained = make(chan struct{})
	}
	return c.drained, live, true
}
