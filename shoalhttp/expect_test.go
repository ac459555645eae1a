package shoalhttp

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingBody is a request body that counts the Reads it served.
type countingBody struct {
	r     io.Reader
	reads atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	b.reads.Add(1)
	return b.r.Read(p)
}
func (b *countingBody) Close() error { return nil }

// "Expect: 100-continue": the body waits for the server's 100 Continue
// (which net/http's server sends when the handler reads the body), firing
// the same hooks as net/http's Transport with the same timeout; a server
// that refuses without reading, and closes, never gets the body.
func TestExpectContinue(t *testing.T) {
	srv, _ := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/refuse" {
			http.Error(w, "no uploads here", http.StatusUnauthorized)
			return
		}
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, "got "+string(b))
	}))
	base := &http.Transport{ExpectContinueTimeout: 5 * time.Second}
	defer base.CloseIdleConnections()
	tr := newTestTransport(t, Options{ExpectContinueTimeout: 5 * time.Second})

	send := func(rt http.RoundTripper, path string, body io.ReadCloser) (*http.Response, []string, time.Duration) {
		t.Helper()
		rec := &traceRecorder{}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, rec.trace()), http.MethodPut, srv.URL+path, body)
		req.ContentLength = int64(len("the payload"))
		req.Header.Set("Expect", "100-continue")
		start := time.Now()
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatalf("PUT %s: %v", path, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp, rec.got(), time.Since(start)
	}
	for range 2 { // fresh, then reused
		_, want, _ := send(base, "/", io.NopCloser(strings.NewReader("the payload")))
		resp, got, took := send(tr, "/", io.NopCloser(strings.NewReader("the payload")))
		t.Logf("shoalhttp: %s", strings.Join(got, ", "))
		if !sameHooks(got, want) {
			t.Errorf("shoalhttp fired\n\t%s\nnet/http fired\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
		}
		if resp.StatusCode != http.StatusOK {
			t.Errorf("PUT: %d", resp.StatusCode)
		}
		if took >= 5*time.Second {
			t.Errorf("PUT took %v: the body waited for the timeout, not for 100 Continue", took)
		}
	}

	body := &countingBody{r: strings.NewReader("the payload")}
	resp, _, _ := send(tr, "/refuse", body)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("PUT /refuse: %d, want 401", resp.StatusCode)
	}
	if n := body.reads.Load(); n != 0 {
		t.Errorf("the refused body was read %d times, want 0 (not sent)", n)
	}
}

// A server that ignores "Expect: 100-continue" and waits for the body gets
// it once ExpectContinueTimeout has passed, instead of both ends waiting
// until the request's context ends.
func TestExpectContinueTimeoutSendsTheBody(t *testing.T) {
	srv := startRawServer(t, func(c net.Conn, br *bufio.Reader) {
		if readRequest(br) { // reads the body, which never comes before the timeout
			io.WriteString(c, okResponse)
		}
	})
	tr := newTestTransport(t, Options{ExpectContinueTimeout: 20 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, srv.url(), strings.NewReader("the payload"))
	req.Header.Set("Expect", "100-continue")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("PUT to a server that sends no 100 Continue: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != "ok" {
		t.Errorf("PUT: %d %q", resp.StatusCode, b)
	}
}
