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
// CancelTimeout, the connection takes no new statements (an acquire that
// finds it quiet retires it), and once no caller waits on a statement
// written to it, what it runs is cancelled and, if the server does not
// answer within CancelTimeout, it is broken (dropAbandoned), which frees
// its place; a server that answers was slow, not silent, and the
// connection, unless an acquire retired it meanwhile, takes statements
// again (the reader clears the mark at any answer). Callers whose
// statements were written behind the quiet one keep waiting within their
// contexts: on a slow server they get their answers. Which of the two it
// is nobody can tell from the client before the cancel request's answer,
// and a cancel request sent while such a caller waits could stop that
// caller's statement instead of the abandoned one; a statement still
// queued it cannot stop, as nothing more is written while cancel
// requests are out (cancelAbandoned).

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
// CancelTimeout, and returns once nothing abandoned is pending or the
// connection broke. A quiet connection is marked so that it takes no new
// statement; if no caller waits on it, its statements are cancelled and
// it is broken unless the server answers (dropAbandoned).
//
// It keeps watching while callers wait behind a quiet head, and while an
// abandoned statement waits behind a live one: nobody else would look
// again when the server answers them (a caller that has its answer calls
// nothing here), so a quiet mark would stay, and admit retire a
// connection that was slow, not silent; and an abandoned statement that
// comes to the head once the live one ahead of it is answered would run
// on, its stream held, with nobody to cancel it. While a caller waits it
// looks every cancelRetry: the server's answers signal nothing else.
func (c *pipeConn) watchQuiet() {
	for {
		drained, head, live, ok := c.abandonedHead()
		if !ok {
			// Nothing abandoned is pending (or the connection
			// broke): it takes statements again.
			c.quiet.Store(false)
			return
		}
		wait := cancelRetry
		if head {
			since := time.Duration(pipeClock() - c.pace.turnAt.Load())
			if since < c.cancelWait {
				wait = c.cancelWait - since
			} else {
				c.quiet.Store(true)
				if !live {
					c.dropAbandoned()
					if c.broken() == nil {
						c.quiet.Store(false) // the server answered the cancel: slow, not silent
					}
					return
				}
			}
		} else {
			// A caller's statement is at the head: the server
			// answered what was quiet ahead of it.
			c.quiet.Store(false)
		}
		t := time.NewTimer(wait)
		select {
		case <-drained:
		case <-c.quit:
		case <-t.C:
		}
		t.Stop()
	}
}

// abandonedHead reports, ok, whether an abandoned statement is pending at
// the server on the connection (its caller gave up); then head tells
// whether the oldest statement at the server has no caller waiting (its
// caller gave up, or it is a preparation), live whether a caller waits on
// one written behind that (one still queued, a cancel request cannot
// stop: see cancelAbandoned), and drained is closed once nothing written
// is pending (noteDrainedLocked).
func (c *pipeConn) abandonedHead() (drained <-chan struct{}, head, live, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	written := len(c.pending) - len(c.queue)
	if c.err != nil || written == 0 || c.pace.atServer.Load() == 0 {
		return nil, false, false, false
	}
	h := c.pending[0]
	head = h.onDone != nil || h.state.Load() != reqWaiting
	ok = h.onDone == nil && h.state.Load() == reqAbandoned
	for _, r := range c.pending[1:written] {
		if r.onDone != nil {
			continue
		}
		switch r.state.Load() {
		case reqWaiting:
			live = true
		case reqAbandoned:
			ok = true
		}
	}
	if !ok {
		return nil, false, false, false
	}
	if c.drained == nil {
		c.drained = make(chan struct{})
	}
	return c.drained, head, live, true
}
