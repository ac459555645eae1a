package shoalhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"

	"golang.org/x/net/http2"
)

// replayable reports whether req's body can be sent again.
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// idempotent reports whether sending req twice has the effect of sending it
// once, by net/http's rule: a safe method, or an idempotency key set by the
// caller.
func idempotent(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	if _, ok := req.Header["Idempotency-Key"]; ok {
		return true
	}
	_, ok := req.Header["X-Idempotency-Key"]
	return ok
}

// errCannotRewind: a retry needs the request's body again, and it has no
// GetBody and had been read.
var errCannotRewind = errors.New("request body cannot be sent again: it has no GetBody and was read")

// rewind returns a copy of req with a fresh body, for a retry: GetBody's,
// or, without GetBody, the body itself when it is in an unreadBody that was
// never read.
func rewind(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	if req.GetBody == nil {
		ub, ok := req.Body.(*unreadBody)
		if !ok {
			return nil, errCannotRewind
		}
		body, ok := ub.take()
		if !ok {
			return nil, errCannotRewind
		}
		r := *req
		r.Body = body
		return &r, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := *req
	r.Body = body
	return &r, nil
}

// retryOrFail decides what follows an attempt at req that failed with
// err: the request to send again, when the attempt was the first, the
// protocol allows it (canRetry) and the body can be sent again; otherwise
// the error to return, which says so when ctx ended.
func retryOrFail(ctx context.Context, req *http.Request, attempt int, err error, canRetry func(*http.Request, error) bool) (*http.Request, error) {
	if ctx.Err() != nil {
		return nil, fmt.Errorf("request canceled: %w", ctx.Err())
	}
	if attempt == 0 && canRetry(req, err) {
		if next, rerr := rewind(req); rerr == nil {
			return next, nil
		}
	}
	return nil, err
}

// h1CanRetry reports whether an HTTP/1.1 request that failed with err may be
// sent once more on another connection: the connection had been used
// before (a fresh one failing says something about the server, not about
// staleness), it died before any byte of a response came back, and either
// none of the request reached the socket or the request is idempotent.
func h1CanRetry(req *http.Request, err error) bool {
	var ce *connError
	if !errors.As(err, &ce) || !ce.reused || ce.received || !connDead(ce.err) || !replayable(req) {
		return false
	}
	return !ce.sent || idempotent(req)
}

// connDead reports whether err says the peer closed or reset the
// connection.
func connDead(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, net.ErrClosed)
}

// The x/net/http2 errors that mean "the server never saw this request";
// they are not exported, so they are recognised by their text. x/net
// says "could not be established" of a closed connection that has never
// opened a stream, which for a pooled one means closed before its first.
const (
	h2ErrConnUnusable = "http2: client conn not usable"
	h2ErrGotGoAway    = "http2: Transport received Server's graceful shutdown GOAWAY"
	h2ErrNoStreamYet  = "http2: client conn could not be established"
)

// h2CanRetry reports whether an HTTP/2 request that failed with err was
// never processed by the server (refused, or above a GOAWAY's last stream,
// or given a connection that had just become unusable or closed before
// its first stream) and can be replayed: its body can be rewound, or x/net
// read none of it (an unreadBody), as when the connection was unusable
// before the request started, so that it can go to another connection as
// it is.
func h2CanRetry(req *http.Request, err error) bool {
	if !replayable(req) {
		ub, ok := req.Body.(*unreadBody)
		if !ok || !ub.unread() {
			return false
		}
	}
	var se http2.StreamError
	if errors.As(err, &se) {
		return se.Code == http2.ErrCodeRefusedStream
	}
	msg := err.Error()
	return msg == h2ErrConnUnusable || msg == h2ErrGotGoAway || msg == h2ErrNoStreamYet
}
