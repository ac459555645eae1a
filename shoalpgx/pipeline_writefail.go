package shoalpgx

import (
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A failed write. The server answers in the order it was written to, and
// when a write fails because the server hung up, the answers it sent
// before, to requests written earlier, may still be in the socket, unread:
// those statements ran, and an INSERT among them committed, so their
// callers get the answers, not the write's error. The connection is only
// marked broken for new requests (werr): the requests of which nothing
// left fail at once, and the reader reads on until the socket has nothing
// more, then fails the rest with the write's error (failLocked).

// writeFailDrain bounds the reader's last reads after a failed write. A
// server that hung up sends nothing more and its socket ends at once; the
// bound is for a network gone silent.
const writeFailDrain = time.Second

// failWriteLocked breaks the connection after a write failed with err;
// unwritten are requests the write carried of which no byte left. It
// returns the requests whose callers gave up, as failLocked does. c.mu
// must be held.
func (c *pipeConn) failWriteLocked(err error, unwritten []*pipeReq) (gone []*pipeReq) {
	if c.err != nil || c.werr != nil {
		return nil
	}
	for _, r := range unwritten {
		r.unsent = true // the queue's are marked below, or by failLocked
	}
	if len(c.pending) == len(c.queue)+len(unwritten) {
		return c.failLocked(err) // no answer can come
	}
	c.werr = err
	for _, r := range append(unwritten, c.queue...) {
		r.unsent = true
		c.pending = withoutReq(c.pending, r)
		if r.finish(err) {
			gone = append(gone, r)
		}
	}
	c.queue = nil
	c.drainBy = time.Now().Add(writeFailDrain)
	_ = c.nc.SetReadDeadline(c.drainBy)
	if c.reader == readerNone {
		c.reader = readerLoop
		select {
		case c.wake <- struct{}{}:
		default: // readLoop has a wake-up waiting already
		}
	}
	return gone
}

// restoreReadDeadline puts back the read deadline a caller's interruption
// replaced (readFor): none, or after a failed write the end of the drain,
// which the caller's context must not lift.
func (c *pipeConn) restoreReadDeadline() {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.nc.SetReadDeadline(c.drainBy)
}

// brokenLocked is why the connection takes no more requests: it broke,
// or a write failed and the reader is taking the last answers. c.mu must
// be held.
func (c *pipeConn) brokenLocked() error {
	if c.err != nil {
		return c.err
	}
	return c.werr
}

// readErrAfterWrite is the error the requests still unanswered fail with
// when the reader stops: after a failed write, the write's error, which
// says why, unless the server sent one of its own.
func (c *pipeConn) readErrAfterWrite(err error) error {
	var pe *pgconn.PgError
	if c.werr != nil && !errors.As(err, &pe) {
		return c.werr
	}
	return err
}
