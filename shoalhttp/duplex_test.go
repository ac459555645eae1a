package shoalhttp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A server that answers while it is still reading the request body: the
// response comes back while the body is still being written (a pipe the
// caller feeds after reading each answer), as with net/http, and the
// connection is reused once both are done.
func TestHTTP1FullDuplexConversation(t *testing.T) {
	srv, conns := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, "plain")
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.EnableFullDuplex(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
		rc.Flush()
		lines := bufio.NewScanner(r.Body)
		for lines.Scan() {
			fmt.Fprintf(w, "echo:%s\n", lines.Text())
			rc.Flush()
		}
		io.WriteString(w, "bye\n")
	}))
	tr := newTestTransport(t, Options{MaxConns: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for round := range 2 {
		pr, pw := io.Pipe()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/chat", pr)
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatalf("round %d: POST: %v (a client that writes the whole body first never gets here)", round, err)
		}
		lines := bufio.NewReader(resp.Body)
		for i := range 3 {
			msg := fmt.Sprintf("round %d line %d", round, i)
			if _, err := io.WriteString(pw, msg+"\n"); err != nil {
				t.Fatalf("writing the body: %v", err)
			}
			got, err := lines.ReadString('\n')
			if err != nil || got != "echo:"+msg+"\n" {
				t.Fatalf("answer to %q: %q, %v", msg, got, err)
			}
		}
		pw.Close()
		rest, err := io.ReadAll(lines)
		if err != nil || string(rest) != "bye\n" {
			t.Fatalf("end of the response: %q, %v", rest, err)
		}
		resp.Body.Close()
	}
	eventually(t, "the connection back in the pool", func() bool {
		_, st := onlyStats(t, tr)
		return st.IdleConns == 1 && st.Leases == 0
	})
	if _, body := get(t, tr, srv.URL+"/"); body != "plain" {
		t.Errorf("GET after the conversations: %q", body)
	}
	if n := conns.n.Load(); n != 1 {
		t.Errorf("server accepted %d connections, want 1 (reused after each full-duplex exchange)", n)
	}
}

// A server that echoes a large in-memory body as it reads it: written
// first and read after, both directions' buffers would fill and the
// request would wait until its context ended.
func TestHTTP1EchoOfALargeBody(t *testing.T) {
	srv, _ := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex()
		io.Copy(w, r.Body)
	}))
	tr := newTestTransport(t, Options{})
	payload := bytes.Repeat([]byte("0123456789abcdef"), 1<<20) // 16 MiB
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL, bytes.NewReader(payload))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("PUT: %v", err)
	}
	defer resp.Body.Close()
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	if err != nil || n != int64(len(payload)) || !bytes.Equal(h.Sum(nil), sum256(payload)) {
		t.Fatalf("echo: %d bytes, %v; want the %d bytes sent", n, err, len(payload))
	}
}

func sum256(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// A streaming body that fails after the response has started: the
// connection is not reused, and a body that fails before any answer fails
// the request with the body's own error (as when it is written first).
func TestHTTP1DuplexBodyFailure(t *testing.T) {
	srv, conns := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "read it all")
	}))
	tr := newTestTransport(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	bodyErr := errors.New("the producer gave up")
	go func() {
		io.WriteString(pw, "some of it, ")
		pw.CloseWithError(bodyErr)
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, pr)
	_, err := tr.RoundTrip(req)
	if !errors.Is(err, bodyErr) || !strings.Contains(err.Error(), "reading request body") {
		t.Fatalf("RoundTrip: %v, want the body's error", err)
	}
	eventually(t, "the broken connection closed", func() bool {
		_, st := onlyStats(t, tr)
		return st.TotalConns == 0 && st.Leases == 0
	})
	if _, body := get(t, tr, srv.URL+"/"); body != "read it all" {
		t.Errorf("GET after: %q", body)
	}
	if n := conns.n.Load(); n != 2 {
		t.Errorf("server accepted %d connections, want 2 (the broken one not reused)", n)
	}
}

// Which bodies are written beside the response's read: all but small ones
// in memory, whatever ContentLength says (0 with a body means unknown).
func TestWritesConcurrently(t *testing.T) {
	big := strings.Repeat("x", maxSerialBody+1)
	pr, pw := io.Pipe()
	defer pw.Close()
	for _, tc := range []struct {
		name string
		body io.Reader
		want bool
	}{
		{"no body", nil, false},
		{"small strings.Reader", strings.NewReader("hi"), false},
		{"small bytes.Buffer", bytes.NewBufferString("hi"), false},
		{"big bytes.Reader", bytes.NewReader([]byte(big)), true},
		{"big strings.Reader behind NopCloser (length unknown)", io.NopCloser(strings.NewReader(big)), true},
		{"small strings.Reader behind NopCloser", io.NopCloser(strings.NewReader("hi")), false},
		{"pipe", pr, true},
	} {
		req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/", tc.body)
		if err != nil {
			t.Fatal(err)
		}
		if got := writesConcurrently(req); got != tc.want {
			t.Errorf("%s: writesConcurrently = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A request whose streaming body is still being written when its context
// ends returns the context's error, closes the body (unblocking a writer
// waiting on its producer) and leaves no lease behind.
func TestHTTP1DuplexCanceledMidBody(t *testing.T) {
	gotFirst := make(chan struct{})
	srv, _ := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [1]byte
		if _, err := io.ReadFull(r.Body, b[:]); err == nil {
			close(gotFirst)
		}
		io.Copy(io.Discard, r.Body) // waits for a body that never ends
	}))
	tr := newTestTransport(t, Options{})
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, pr)
	go func() {
		io.WriteString(pw, "a first part, and then nothing")
		// The server has it: the writer now waits in the pipe's Read,
		// where no socket interrupt reaches.
		<-gotFirst
		cancel()
	}()
	done := make(chan error, 1)
	go func() {
		_, err := tr.RoundTrip(req)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("RoundTrip: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RoundTrip still running 10s after its context ended")
	}
	if _, err := pw.Write([]byte("more")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("writing to the body after the request ended: %v, want io.ErrClosedPipe (the body closed)", err)
	}
	eventually(t, "no lease left", func() bool {
		_, st := onlyStats(t, tr)
		return st.Leases == 0 && st.TotalConns == 0
	})
}

// A server that answers at once and then neither reads the rest of a large
// streamed body nor closes: once the response is read and closed, the
// writer still blocked on the socket is cut off and the connection closed,
// as net/http does, rather than hold its lease for as long as the server
// keeps the connection open (and keep Close from ending it).
func TestHTTP1WriterStuckAfterTheResponseIsCutOff(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	srv := startRawServer(t, func(c net.Conn, br *bufio.Reader) {
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(c, okResponse)
		<-hold // neither reads nor closes
	})
	tr := newTestTransport(t, Options{})
	const size = 64 << 20 // more than the sockets' buffers hold
	body := io.NopCloser(io.LimitReader(zeros{}, size))
	req, err := http.NewRequest(http.MethodPost, srv.url(), body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "ok" {
		t.Fatalf("response body %q, %v", b, err)
	}
	resp.Body.Close()
	eventually(t, "the connection closed and its lease ended", func() bool {
		_, st := onlyStats(t, tr)
		return st.Leases == 0 && st.TotalConns == 0
	})
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
