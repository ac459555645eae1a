package shoalhttp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestBadRequestsAreRefused: a method or header that cannot be written as
// it stands fails with an error naming it, before any connection is made;
// a header's value is never quoted.
func TestBadRequestsAreRefused(t *testing.T) {
	srv := startRawServer(t, func(c net.Conn, br *bufio.Reader) {
		for readRequest(br) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		}
	})
	tr := newTestTransport(t, Options{})
	for _, tc := range []struct {
		name, method, key, value, want string
	}{
		{"a method that injects a header", "GET / HTTP/1.1\r\nX-Injected: 1\r\nFoo:", "", "", `invalid method "GET / HTTP/1.1\r\nX-Injected: 1\r\nFoo:"`},
		{"a method with a space", "GE T", "", "", `invalid method "GE T"`},
		{"a header name with a space", "GET", "Bad Name", "v", `invalid header field name "Bad Name"`},
		{"a header value with CRLF", "GET", "X-Token", "secret\r\nX-Injected: 1", `invalid value for header field "X-Token"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.url(), nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Method = tc.method
			if tc.key != "" {
				req.Header[tc.key] = []string{tc.value}
			}
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
				t.Fatal("the request was sent")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %s", err, tc.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q quotes a header's value", err)
			}
		})
	}
	if n := srv.accepted.Load(); n != 0 {
		t.Errorf("the server saw %d connections for requests that should have been refused", n)
	}
}

// panickyBody panics on its first Read, as a caller's reader might.
type panickyBody struct{}

func (panickyBody) Read([]byte) (int, error) { panic("the body's reader broke") }
func (panickyBody) Close() error             { return nil }

// TestPanicInRequestBodyFreesTheConnection: a panic in the caller's body,
// recovered by the caller, leaves no connection leased: with MaxConns 1
// the next request gets through, and Close completes.
func TestPanicInRequestBodyFreesTheConnection(t *testing.T) {
	srv, _ := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	}))
	tr := newTestTransport(t, Options{MaxConns: 1})
	func() {
		defer func() {
			if p := recover(); p != "the body's reader broke" {
				t.Fatalf("recovered %v, want the body's panic", p)
			}
		}()
		req, err := http.NewRequest(http.MethodPost, srv.URL, panickyBody{})
		if err != nil {
			t.Fatal(err)
		}
		tr.RoundTrip(req)
		t.Fatal("RoundTrip returned; the body's panic should have reached the caller")
	}()
	if _, st := onlyStats(t, tr); st.Leases != 0 {
		t.Fatalf("Stats().Leases = %d after the panic, want 0", st.Leases)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("the request after the panic: %v", err)
	}
	resp.Body.Close()
}

// failingBody yields some bytes, then fails with err.
type failingBody struct {
	sent bool
	err  error
}

func (b *failingBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, "some bytes, then "), nil
	}
	return 0, b.err
}
func (b *failingBody) Close() error { return nil }

// TestRequestBodyErrorReachesTheCaller: a body that fails mid-request
// fails the request with the body's own error, reachable by errors.Is, and
// said to be the body's, not the connection's; it is not retried.
func TestRequestBodyErrorReachesTheCaller(t *testing.T) {
	var requests atomic.Int64
	srv, _ := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		io.Copy(io.Discard, r.Body)
	}))
	tr := newTestTransport(t, Options{})
	bodyErr := errors.New("the upstream went away")
	req, err := http.NewRequest(http.MethodPut, srv.URL, &failingBody{err: bodyErr})
	if err != nil {
		t.Fatal(err)
	}
	req.GetBody = func() (io.ReadCloser, error) { return &failingBody{err: bodyErr}, nil } // replayable, yet not to be retried
	_, err = tr.RoundTrip(req)
	if !errors.Is(err, bodyErr) {
		t.Fatalf("RoundTrip: %v, want the body's error", err)
	}
	if !strings.Contains(err.Error(), "reading request body: the upstream went away") {
		t.Errorf("error %q does not say the request body failed", err)
	}
	if n := requests.Load(); n > 1 {
		t.Errorf("the server saw %d requests: a body's failure was retried", n)
	}
}

// TestEarlyFinalResponseIsReturned: a server that answers 413 and closes
// the connection without reading a large body gets its answer to the
// caller, not the write's broken pipe.
func TestEarlyFinalResponseIsReturned(t *testing.T) {
	srv, _ := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		io.WriteString(w, "too big")
	}))
	tr := newTestTransport(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 3 {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, bytes.NewReader(make([]byte, 32<<20)))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("request %d: %v, want the server's 413", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || string(b) != "too big" {
			t.Fatalf("request %d: %d %q, want 413 \"too big\"", i, resp.StatusCode, b)
		}
	}
	if _, st := onlyStats(t, tr); st.TotalConns != 0 {
		t.Errorf("%d connections kept after answers the server closed them with", st.TotalConns)
	}
}

// TestEndlessInformationalResponsesFail: a server that sends 1xx answers
// without end fails the request instead of holding it until its context
// ends.
func TestEndlessInformationalResponsesFail(t *testing.T) {
	srv := startRawServer(t, func(c net.Conn, br *bufio.Reader) {
		if !readRequest(br) {
			return
		}
		for range 100 {
			if _, err := io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"); err != nil {
				return
			}
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	})
	tr := newTestTransport(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.url(), nil)
	_, err := tr.RoundTrip(req)
	if want := fmt.Sprintf("more than %d 1xx informational responses", max1xxResponses); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("RoundTrip: %v, want an error saying %s", err, want)
	}
}
