package shoalhttp

import (
	"context"
	"net"
	"time"
)

// Over TLS 1.3 a server judges the client's certificate after the client's
// handshake is over, and refuses it with an alert followed by a close. The
// client's first writes of HTTP/2 (its preface, settings, the PING that
// newH2Conn waits on) can meet that close, as a broken pipe, before x/net's
// read loop has read the alert; closing the socket on that write error, as
// a coalescingConn otherwise does, would lose the alert, and with it the
// permanent error (markPermanent) that tells the pool no retry mends it.
// x/net closes the connection itself when it cannot write its preface,
// before its read loop has started, so while HTTP/2 is being set up every
// write is queued, and a failed one fails the next (coalescingConn.Write).

// alertWait bounds how long, after a write error while HTTP/2 is being set
// up, the read loop may still read before the dial gives up on an alert: a
// server that closed after one has it waiting in the socket already.
const alertWait = 100 * time.Millisecond

// holdOnWriteError has nc, a connection from coalesce, keep its socket
// open after a write error until closeOnWriteError, so that the read loop
// can read what the server sent before closing.
func holdOnWriteError(nc net.Conn) { coalesced(nc).holdOnFail.Store(true) }

// closeOnWriteError ends holdOnWriteError: HTTP/2 is set up on nc.
func closeOnWriteError(nc net.Conn) { coalesced(nc).holdOnFail.Store(false) }

// refusalOr returns what a failed settings exchange on nc, a connection
// under holdOnWriteError, reports: the error the read loop met, when a
// write failed and that error is a refusal no retry mends (a TLS alert);
// err otherwise. After a write error it waits for the read loop to end,
// which alertWait's read deadline bounds, or for ctx.
func refusalOr(ctx context.Context, nc net.Conn, err error) error {
	c := coalesced(nc)
	c.mu.Lock()
	failed := c.err != nil
	c.mu.Unlock()
	if !failed {
		return err
	}
	select {
	case <-c.readerGone:
	case <-ctx.Done():
		return err
	}
	c.mu.Lock()
	rerr := c.readErr
	c.mu.Unlock()
	if rerr != nil && permanent(rerr) {
		return rerr
	}
	return err
}
