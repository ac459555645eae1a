package shoalhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// An http.Client Timeout that passes while the server thinks gives, over
// HTTP/1.1 and HTTP/2, the error net/http's Transport gives: os.IsTimeout
// holds, it says "(Client.Timeout exceeded while awaiting headers)" and
// reaches context.DeadlineExceeded. Several rounds, since the Client's
// timer and the context's deadline fire at the same instant and used to
// race. net/http's Transport shows the error on a real server; shoalhttp's
// runs in a synctest bubble on in-memory connections, where the Client's
// timer, due at the deadline, runs before the bubble's clock reaches the
// end of the wait for it (awaitCancel), however busy the machine. net/http's
// cannot run there: the Client asks it whether the clock has passed the
// deadline, and a bubble's clock stands at the deadline as its timers fire.
func TestClientTimeoutReadsAsNetHTTPs(t *testing.T) {
	check := func(t *testing.T, rt http.RoundTripper, url string) {
		t.Helper()
		c := &http.Client{Transport: rt, Timeout: 30 * time.Millisecond}
		for i := range 6 {
			_, err := c.Get(url)
			if err == nil {
				t.Fatalf("%T round %d: no error", rt, i)
			}
			if !os.IsTimeout(err) {
				t.Errorf("%T round %d: os.IsTimeout false for %v", rt, i, err)
			}
			if !strings.Contains(err.Error(), "(Client.Timeout exceeded while awaiting headers)") {
				t.Errorf("%T round %d: %q does not say Client.Timeout exceeded", rt, i, err)
			}
			if _, ok := rt.(*Transport); ok && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("round %d: %v does not reach context.DeadlineExceeded", i, err)
			}
		}
	}
	for _, h2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "h1", true: "h2"}[h2], func(t *testing.T) {
			// The handler thinks until the test ends, whatever happens to
			// the request's context (net/http's server can end it early
			// when it sees the connection close).
			release := make(chan struct{})
			srv, _, tlsCfg := newTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-release:
				case <-time.After(10 * time.Second):
				}
			}), h2)
			t.Cleanup(func() { close(release) }) // before the server's Close
			base := &http.Transport{TLSClientConfig: tlsCfg, ForceAttemptHTTP2: h2}
			defer base.CloseIdleConnections()
			check(t, base, srv.URL)
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				srv := newPipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }), h2)
				t.Cleanup(func() { close(release) })
				check(t, newTestTransport(t, Options{TLSClientConfig: srv.TLS, DialContext: srv.dial, Proxy: NoProxy}), srv.URL)
			})
		})
	}
}

// Without http.Client, a request whose own context deadline passes fails
// with an error that os.IsTimeout knows, and one canceled does not.
func TestContextDeadlineIsATimeout(t *testing.T) {
	srv, _, tlsCfg := newTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}), true)
	tr := newTestTransport(t, Options{TLSClientConfig: tlsCfg})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if _, err := tr.RoundTrip(req); !os.IsTimeout(err) {
		t.Errorf("deadline: os.IsTimeout false for %v", err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel2)
	req2, _ := http.NewRequestWithContext(ctx2, http.MethodGet, srv.URL, nil)
	if _, err := tr.RoundTrip(req2); err == nil || os.IsTimeout(err) {
		t.Errorf("canceled: %v, want an error that is not a timeout", err)
	}
}

// A Client.Timeout that passes while the body is being read gives the
// error net/http's Transport gives: os.IsTimeout holds and it says
// "(Client.Timeout or context cancellation while reading body)". In a
// synctest bubble, on in-memory connections: the handshake takes no time
// on the bubble's clock, so the timeout passes in the body, and the
// Client's timer, which fires at the instant the request's deadline
// passes, runs before the bubble's clock reaches the end of the wait for
// it (awaitCancel), however busy the machine. net/http's Transport is not
// run beside it here: the Client asks it whether the clock has passed the
// deadline, and a bubble's clock stands at the deadline as its timers fire.
func TestClientTimeoutWhileReadingBody(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "h1", true: "h2"}[h2], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				srv := newPipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, "the first part")
					http.NewResponseController(w).Flush()
					<-release // the rest never comes in time
				}), h2)
				t.Cleanup(func() { close(release) }) // before the server's Close
				tr := newTestTransport(t, Options{TLSClientConfig: srv.TLS, DialContext: srv.dial, Proxy: NoProxy})
				c := &http.Client{Transport: tr, Timeout: 250 * time.Millisecond}
				for i := range 4 {
					resp, err := c.Get(srv.URL)
					if err != nil {
						t.Fatalf("round %d: %v", i, err)
					}
					if h2 != (resp.ProtoMajor == 2) {
						t.Fatalf("round %d: the response came over %s", i, resp.Proto)
					}
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
					if !os.IsTimeout(err) {
						t.Errorf("round %d: os.IsTimeout false for %v", i, err)
					}
					if err == nil || !strings.Contains(err.Error(), "(Client.Timeout or context cancellation while reading body)") {
						t.Errorf("round %d: %v does not say Client.Timeout", i, err)
					}
				}
			})
		})
	}
}

// A Client.Timeout that passes in the dial is the Client's timeout too,
// though the dial fails with a socket's "i/o timeout", which is not
// context.DeadlineExceeded: a connect bounded by the request's deadline
// can fail on the socket's deadline before the context's own timer has
// run, as it does on a busy machine. The dial here fails so at the
// deadline, in a synctest bubble; the error must say "(Client.Timeout
// exceeded while awaiting headers)" and reach context.DeadlineExceeded,
// as net/http's Transport's does.
func TestClientTimeoutInTheDial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTestTransport(t, Options{Proxy: NoProxy, MinConns: -1,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				d, ok := ctx.Deadline()
				if !ok {
					return nil, errors.New("a dial without the request's deadline")
				}
				time.Sleep(time.Until(d))
				return nil, &net.OpError{Op: "dial", Net: network, Err: os.ErrDeadlineExceeded}
			}})
		c := &http.Client{Transport: tr, Timeout: 30 * time.Millisecond}
		for i := range 8 {
			// A fresh origin each round, since a failed dial is shared
			// with the origin's next requests for a while.
			_, err := c.Get(fmt.Sprintf("https://origin-%d.test/", i))
			if err == nil {
				t.Fatalf("round %d: no error", i)
			}
			if !os.IsTimeout(err) {
				t.Errorf("round %d: os.IsTimeout false for %v", i, err)
			}
			if !strings.Contains(err.Error(), "(Client.Timeout exceeded while awaiting headers)") {
				t.Errorf("round %d: %q does not say Client.Timeout exceeded", i, err)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("round %d: %v does not reach context.DeadlineExceeded", i, err)
			}
		}
	})
}
