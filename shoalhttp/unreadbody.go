package shoalhttp

import (
	"errors"
	"io"
	"net/http"
	"sync"
)

// unreadBody stands between x/net and an HTTP/2 request body that cannot
// be rewound (no GetBody), so that a request refused before x/net read any
// of it can go to another connection with the same body, as net/http
// sends it: it records whether x/net read from it, and holds back x/net's
// Close of a body never read until the round trip knows the body is not
// moving on (release), since x/net closes the body of every request it
// fails.
type unreadBody struct {
	rc io.ReadCloser

	mu        sync.Mutex
	read      bool // x/net has read from it
	held      bool // a Close before any read is recorded, not passed on
	closeWait bool // x/net closed it while held
	closed    bool // rc.Close has been called (or the body moved on)
	taken     bool // the body moved to another attempt (take)
}

// errBodyMoved: x/net read a body after it moved to another attempt, which
// its failed round trip does not do.
var errBodyMoved = errors.New("request body read by a round trip that failed: it went to the retry")

// holdBody returns req to send, with its body in an unreadBody when it
// cannot be rewound, and that unreadBody (nil for none).
func holdBody(req *http.Request) (*http.Request, *unreadBody) {
	if replayable(req) {
		return req, nil
	}
	b := &unreadBody{rc: req.Body, held: true}
	r := *req
	r.Body = b
	return &r, b
}

func (b *unreadBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.taken {
		b.mu.Unlock()
		return 0, errBodyMoved
	}
	b.read = true
	b.mu.Unlock()
	return b.rc.Read(p)
}

// Close passes x/net's Close on, unless nothing was read and the round
// trip has not ended: then the body may still go to another connection.
// Once x/net has read from the body, a Close must reach it at once, to end
// a Read blocked in it.
func (b *unreadBody) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	if b.held && !b.read {
		b.closeWait = true
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	return b.rc.Close()
}

// unread reports whether x/net has read none of the body.
func (b *unreadBody) unread() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.read && !b.taken
}

// take hands the body, never read, over to another attempt, and reports
// false when x/net has read from it; after it this wrapper neither reads
// nor closes the body.
func (b *unreadBody) take() (io.ReadCloser, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.read || b.taken {
		return nil, false
	}
	b.taken, b.closed = true, true
	return b.rc, true
}

// release ends the hold when the round trip is over without a retry: a
// Close x/net made meanwhile is passed on, and so is one now when failed
// says the request failed (the body is the Transport's to close). A nil b
// does nothing.
func (b *unreadBody) release(failed bool) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.held = false
	if b.closed || !(b.closeWait || failed) {
		b.mu.Unlock()
		return
	}
	b.closed = true
	b.mu.Unlock()
	b.rc.Close()
}
