package shoalhttp

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/syncbuf"
)

// rawServer is a hand-written HTTP/1.1 server whose connections answer
// the first answered requests and then misbehave in a chosen way, to
// produce connections that die under a request.
type rawServer struct {
	ln       net.Listener
	accepted atomic.Int64
	wg       sync.WaitGroup
}

// startRawServer serves each connection with serve(conn, reader).
func startRawServer(t *testing.T, serve func(c net.Conn, br *bufio.Reader)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln}
	var mu sync.Mutex
	var open []net.Conn
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			s.wg.Go(func() {
				defer c.Close()
				serve(c, bufio.NewReader(c))
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *rawServer) url() string { return "http://" + s.ln.Addr().String() }

// readRequest reads one request and its body; false when the client left.
func readRequest(br *bufio.Reader) bool {
	req, err := http.ReadRequest(br)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, req.Body)
	return true
}

const okResponse = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

// dieOnSecondRequest answers a connection's first request and closes the
// connection when the second one has been read, without answering it:
// the connection looked alive until the request went out.
func dieOnSecondRequest(c net.Conn, br *bufio.Reader) {
	if !readRequest(br) {
		return
	}
	io.WriteString(c, okResponse)
	readRequest(br)
}

func TestRetryOnceWhenReusedConnectionDies(t *testing.T) {
	srv := startRawServer(t, dieOnSecondRequest)
	tr := newTestTransport(t, Options{})
	client := &http.Client{Transport: tr}

	if code, _ := get(t, tr, srv.url()); code != 200 {
		t.Fatalf("first request: %d", code)
	}
	// The pooled connection dies under this GET: it is retried once, on a
	// new connection, and succeeds.
	if code, body := get(t, tr, srv.url()); code != 200 || body != "ok" {
		t.Fatalf("retried GET: %d %q", code, body)
	}
	if n := srv.accepted.Load(); n != 2 {
		t.Fatalf("server accepted %d connections, want 2", n)
	}

	// A POST with a replayable body, but not idempotent, that reached the
	// server: not retried, since the server may have acted on it.
	req, _ := http.NewRequest(http.MethodPost, srv.url(), strings.NewReader("payload"))
	_, err := client.Do(req)
	if err == nil {
		t.Fatal("POST on a connection that died under it succeeded; it must not be retried")
	}
	if n := srv.accepted.Load(); n != 2 {
		t.Errorf("server accepted %d connections after the POST, want 2 (no retry)", n)
	}

	// The same POST with an Idempotency-Key is retried.
	if code, _ := get(t, tr, srv.url()); code != 200 { // a fresh connection, used once
		t.Fatal(code)
	}
	req, _ = http.NewRequest(http.MethodPost, srv.url(), strings.NewReader("payload"))
	req.Header.Set("Idempotency-Key", "k1")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("idempotent POST: %v", err)
	}
	resp.Body.Close()
}

func TestNoRetryOnFreshConnection(t *testing.T) {
	// Every connection is closed as soon as a request has been read.
	srv := startRawServer(t, func(c net.Conn, br *bufio.Reader) { readRequest(br) })
	tr := newTestTransport(t, Options{})
	_, err := (&http.Client{Transport: tr}).Get(srv.url())
	if err == nil {
		t.Fatal("request to a server that hangs up succeeded")
	}
	if n := srv.accepted.Load(); n != 1 {
		t.Errorf("server accepted %d connections, want 1: a fresh connection's failure is not retried", n)
	}
}

// TestIdleConnectionClosedByServerIsNotUsed: a connection the server closed
// while it sat idle is noticed before a request is written to it, so even a
// request that cannot be replayed goes through.
func TestIdleConnectionClosedByServerIsNotUsed(t *testing.T) {
	closed := make(chan struct{}, 4)
	srv := startRawServer(t, func(c net.Conn, br *bufio.Reader) {
		if readRequest(br) {
			io.WriteString(c, okResponse)
		}
		c.Close()
		closed <- struct{}{}
	})
	tr := newTestTransport(t, Options{})
	if code, _ := get(t, tr, srv.url()); code != 200 {
		t.Fatal(code)
	}
	<-closed
	// Give the FIN a moment to arrive (loopback: well under this).
	time.Sleep(50 * time.Millisecond)
	req, _ := http.NewRequest(http.MethodPost, srv.url(), io.NopCloser(strings.NewReader("not replayable")))
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatalf("POST after the server closed the idle connection: %v", err)
	}
	resp.Body.Close()
	if n := srv.accepted.Load(); n != 2 {
		t.Errorf("server accepted %d connections, want 2", n)
	}
	// Closes run in the background: wait for the dead one's to finish.
	eventually(t, "the dead idle connection closed", func() bool {
		_, st := onlyStats(t, tr)
		return st.Closed >= 1
	})
}

// TestIdleTLSConnectionClosedByServerIsNotUsed: over TLS the server's
// goodbye to an idle connection is a close_notify record, bytes that a
// peek alone cannot tell from a session ticket; the connection must still
// not be handed out, or a POST on it fails and cannot be retried.
func TestIdleTLSConnectionClosedByServerIsNotUsed(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	}))
	srv.Config.IdleTimeout = 50 * time.Millisecond // HTTP/1.1 only: EnableHTTP2 is off
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tlsCfg := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tr := newTestTransport(t, Options{TLSClientConfig: tlsCfg})
	for i := range 5 {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, io.NopCloser(strings.NewReader("not replayable")))
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatalf("POST %d, after the server closed the idle connection: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 1 {
			t.Fatalf("response over %s, want HTTP/1.1", resp.Proto)
		}
		time.Sleep(200 * time.Millisecond) // past the server's IdleTimeout
	}
}

func TestErrorsHideSecrets(t *testing.T) {
	addr := refusedAddr(t)
	var logs syncbuf.Buffer
	tr := newTestTransport(t, Options{Logger: newTestLogger(&logs)})
	req, _ := http.NewRequest(http.MethodGet, "http://alice:hunter2@"+addr+"/q?password=sesame", nil)
	req.Header.Set("Authorization", "Bearer tok-secret")
	_, err := tr.RoundTrip(req)
	if err == nil {
		t.Fatal("request to a closed port succeeded")
	}
	if !errors.Is(err, shoal.ErrDial) {
		t.Errorf("error %v does not match shoal.ErrDial", err)
	}
	for _, secret := range []string{"hunter2", "sesame", "tok-secret", "alice", "/q"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q reveals %q", err, secret)
		}
		if strings.Contains(logs.String(), secret) {
			t.Errorf("log %q reveals %q", logs.String(), secret)
		}
	}
	if !strings.Contains(err.Error(), "http://"+addr) {
		t.Errorf("error %q does not name the origin", err)
	}
}

// A request is retried once: when the retry's reused connection dies too,
// the request fails, with no third attempt on a fresh connection.
func TestRequestIsRetriedOnlyOnce(t *testing.T) {
	var firsts atomic.Int32
	both := make(chan struct{})
	srv := startRawServer(t, func(c net.Conn, br *bufio.Reader) {
		if !readRequest(br) {
			return
		}
		if firsts.Add(1) == 2 {
			close(both)
		}
		<-both // two connections, each with one request answered
		io.WriteString(c, okResponse)
		readRequest(br) // dies under the second
	})
	tr := newTestTransport(t, Options{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { get(t, tr, srv.url()) })
	}
	wg.Wait()
	_, err := (&http.Client{Transport: tr}).Get(srv.url())
	if err == nil {
		t.Fatal("succeeded: a third attempt was made")
	}
	if n := srv.accepted.Load(); n != 2 {
		t.Fatalf("server accepted %d connections, want 2", n)
	}
}
