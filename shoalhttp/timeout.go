//lint:file-ignore SA1019 http.Client still closes the deprecated Request.Cancel when its Timeout fires, which is how a RoundTripper can tell that it did.

package shoalhttp

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// requestError is what RoundTrip returns: a failure named by the request's
// method and origin. It reports Timeout as net/http's errors do, so that
// os.IsTimeout and url.Error.Timeout see a deadline (the context's, a
// dial's, a TLS handshake's) through it.
type requestError struct {
	msg string
	err error
}

func (e *requestError) Error() string { return e.msg }
func (e *requestError) Unwrap() error { return e.err }

// Timeout reports whether the request failed because a deadline passed.
func (e *requestError) Timeout() bool {
	if errors.Is(e.err, context.DeadlineExceeded) {
		return true
	}
	var te interface{ Timeout() bool }
	return errors.As(e.err, &te) && te.Timeout()
}

// clientTimeoutWait bounds how long a request that failed on its
// context's deadline waits for http.Client to notice its own Timeout (see
// awaitClientTimeout).
const clientTimeoutWait = 20 * time.Millisecond

// awaitClientTimeout lets http.Client record that its Timeout fired before
// RoundTrip returns the deadline's error. For a RoundTripper other than
// its own, the Client puts its deadline on the request's context and also
// starts a timer for the same instant, which marks the timeout and then
// closes req.Cancel; only a marked timeout makes the Client's error say
// "(Client.Timeout exceeded while awaiting headers)". An HTTP/2 request
// fails the moment the context ends, usually before that timer has run,
// so it waits for req.Cancel, briefly (a caller's own earlier deadline
// never closes it).
func awaitClientTimeout(req *http.Request, err error) {
	if deadlineError(req.Context(), err) {
		awaitCancel(req.Cancel)
	}
}

// deadlineError reports whether err is the failure of a request whose
// context's deadline passed: the context's own error, or a timeout at or
// after the deadline. A connect or handshake bounded by the deadline can
// fail on its socket's deadline, with "i/o timeout", before the context's
// timer has run, as it does on a busy machine.
func deadlineError(ctx context.Context, err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	d, ok := ctx.Deadline()
	if !ok || time.Now().Before(d) {
		return false
	}
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// awaitCancel waits, as awaitClientTimeout, for cancel (a request's
// Cancel, nil for none), at most clientTimeoutWait.
func awaitCancel(cancel <-chan struct{}) {
	if cancel == nil {
		return
	}
	t := time.NewTimer(clientTimeoutWait)
	defer t.Stop()
	select {
	case <-cancel:
	case <-t.C:
	}
}

// bodyError is a response body's read failure on its request's context:
// a timeout when the deadline passed (os.IsTimeout), after http.Client has
// had the moment it needs to mark its own Timeout (see awaitCancel), so
// that its error says "(Client.Timeout or context cancellation while
// reading body)" as with net/http's Transport.
func bodyError(cancel <-chan struct{}, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		awaitCancel(cancel)
	}
	return &requestError{msg: "reading response body: " + err.Error(), err: err}
}
