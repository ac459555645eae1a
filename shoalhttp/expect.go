package shoalhttp

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"time"
)

// defaultExpectContinueTimeout is Options.ExpectContinueTimeout's default,
// http.DefaultTransport's.
const defaultExpectContinueTimeout = time.Second

// expectsContinue reports whether req asks the server to approve its body
// first ("Expect: 100-continue"), and has a body to hold back.
func expectsContinue(req *http.Request) bool {
	return req.Body != nil && req.Body != http.NoBody && req.ProtoAtLeast(1, 1) &&
		strings.EqualFold(req.Header.Get("Expect"), "100-continue")
}

// errBodyWithheld ends the write of a body the server answered without a
// 100 Continue on a connection that closes after its answer: the body is
// not sent, and the connection is not reused.
var errBodyWithheld = errors.New("request body not sent: the server answered before 100 Continue")

// continueGate holds a request's body back until the server says 100
// Continue, answers, or ExpectContinueTimeout passes, as net/http's
// Transport does. It is the body Request.Write reads, so the head has been
// written (and flushed: the gate is not an in-memory reader, so Write
// flushes the head before the body) when its first Read waits.
type continueGate struct {
	rc      io.ReadCloser
	trace   *httptrace.ClientTrace
	timeout time.Duration
	verdict chan bool // true: send the body; false: do not. Buffered, written once.
	decided bool      // touched by the writer only
	err     error
}

func newContinueGate(rc io.ReadCloser, trace *httptrace.ClientTrace, timeout time.Duration) *continueGate {
	return &continueGate{rc: rc, trace: trace, timeout: max(timeout, 0), verdict: make(chan bool, 1)}
}

// decide tells the writer whether to send the body; only the first call
// counts.
func (g *continueGate) decide(send bool) {
	select {
	case g.verdict <- send:
	default:
	}
}

func (g *continueGate) Read(p []byte) (int, error) {
	if !g.decided {
		g.decided = true
		if g.trace != nil && g.trace.Wait100Continue != nil {
			g.trace.Wait100Continue()
		}
		t := time.NewTimer(g.timeout)
		select {
		case send := <-g.verdict:
			if !send {
				g.err = errBodyWithheld
			}
		case <-t.C:
		}
		t.Stop()
	}
	if g.err != nil {
		return 0, g.err
	}
	return g.rc.Read(p)
}

func (g *continueGate) Close() error { return g.rc.Close() }
