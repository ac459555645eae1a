package shoalhttp

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"
)

// wsGUID is RFC 6455's key suffix for Sec-WebSocket-Accept.
const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

func wsAccept(key string) string {
	h := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

// writeWSFrame writes one unfragmented text frame, masked as a client's
// must be when mask is set.
func writeWSFrame(w io.Writer, payload []byte, mask bool) error {
	hdr := []byte{0x81, 0}
	switch n := len(payload); {
	case n < 126:
		hdr[1] = byte(n)
	default:
		hdr[1] = 126
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(n))
	}
	body := payload
	if mask {
		hdr[1] |= 0x80
		var key [4]byte
		rand.Read(key[:])
		hdr = append(hdr, key[:]...)
		body = make([]byte, len(payload))
		for i, b := range payload {
			body[i] = b ^ key[i%4]
		}
	}
	_, err := w.Write(append(hdr, body...))
	return err
}

// readWSFrame reads one unfragmented frame and returns its payload,
// unmasked.
func readWSFrame(r io.Reader) ([]byte, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(hdr[1] & 0x7f)
	if n == 126 {
		var ext [2]byte
		if _, err := io.ReadFull(r, ext[:]); err != nil {
			return nil, err
		}
		n = int(binary.BigEndian.Uint16(ext[:]))
	} else if n == 127 {
		return nil, errors.New("frame too long for this test")
	}
	var key [4]byte
	masked := hdr[1]&0x80 != 0
	if masked {
		if _, err := io.ReadFull(r, key[:]); err != nil {
			return nil, err
		}
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return nil, err
	}
	if masked {
		for i := range payload {
			payload[i] ^= key[i%4]
		}
	}
	return payload, nil
}

// wsEchoServer is a handler doing a WebSocket handshake by hijacking, then
// sending "hello" in the same write as its 101, then echoing every frame
// until the client closes. It counts the upgrades it saw, and the
// protocol they came over.
type wsEchoServer struct {
	mu     sync.Mutex
	protos []string
	done   sync.WaitGroup
	bad    []string // what went wrong server-side
}

func (s *wsEchoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") == "" {
		io.WriteString(w, r.Proto)
		return
	}
	s.mu.Lock()
	s.protos = append(s.protos, r.Proto)
	s.mu.Unlock()
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || r.Header.Get("Sec-WebSocket-Key") == "" {
		http.Error(w, "not a WebSocket handshake", http.StatusBadRequest)
		return
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.fail("hijack: %v", err)
		return
	}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		var head strings.Builder
		head.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n")
		head.WriteString("Sec-WebSocket-Accept: " + wsAccept(r.Header.Get("Sec-WebSocket-Key")) + "\r\n\r\n")
		rw.WriteString(head.String())
		writeWSFrame(rw, []byte("hello"), false) // in the same packet as the 101
		rw.Flush()
		for {
			msg, err := readWSFrame(rw)
			if err != nil {
				if !errors.Is(err, io.EOF) {
					s.fail("reading a frame: %v", err)
				}
				return
			}
			err = writeWSFrame(rw, append([]byte("echo:"), msg...), false)
			if err == nil {
				err = rw.Flush()
			}
			if err != nil {
				s.fail("writing a frame: %v", err)
				return
			}
		}
	}()
}

func (s *wsEchoServer) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bad = append(s.bad, fmt.Sprintf(format, args...))
}

// dialWebSocket does a client handshake through c and returns the
// response, whose Body is the connection.
func dialWebSocket(t *testing.T, ctx context.Context, c *http.Client, url string) *http.Response {
	t.Helper()
	var raw [16]byte
	rand.Read(raw[:])
	key := base64.StdEncoding.EncodeToString(raw[:])
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", key)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("WebSocket handshake: %v", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		resp.Body.Close()
		t.Fatalf("WebSocket handshake: status %d, want 101", resp.StatusCode)
	}
	if got := resp.Header.Get("Sec-WebSocket-Accept"); got != wsAccept(key) {
		resp.Body.Close()
		t.Fatalf("Sec-WebSocket-Accept %q, want %q", got, wsAccept(key))
	}
	return resp
}

// A WebSocket handshake and echo through http.Client: the 101's Body is an
// io.ReadWriteCloser on the connection, as net/http gives; bytes the
// server sent with its 101 are not lost; the request's context no longer
// applies once the protocol has switched; the connection leaves the pool
// (which serves the next request on another one) and Close closes it. To
// an https origin that speaks HTTP/2 the upgrade goes over HTTP/1.1 and
// plain requests stay on HTTP/2.
func TestWebSocketUpgradeThroughClient(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tls, h2 bool
	}{{"http", false, false}, {"https-h2-origin", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ws := &wsEchoServer{}
			var url string
			var opts Options
			if tc.tls {
				srv, _, tlsCfg := newTLSServer(t, ws, tc.h2)
				url, opts.TLSClientConfig = srv.URL, tlsCfg
			} else {
				srv, _ := newH1Server(t, ws)
				url = srv.URL
			}
			tr := newTestTransport(t, opts)
			c := &http.Client{Transport: tr}
			wantPlain := map[bool]string{false: "HTTP/1.1", true: "HTTP/2.0"}[tc.h2]
			if _, body := get(t, tr, url+"/plain"); body != wantPlain {
				t.Fatalf("plain request before: %q, want %s", body, wantPlain)
			}

			ctx, cancel := context.WithCancel(context.Background())
			resp := dialWebSocket(t, ctx, c, url+"/ws")
			cancel() // the switched connection is no longer the request's
			conn, ok := resp.Body.(io.ReadWriteCloser)
			if !ok {
				t.Fatalf("101 Body is a %T, not an io.ReadWriteCloser", resp.Body)
			}
			r := bufio.NewReader(conn)
			if msg, err := readWSFrame(r); err != nil || string(msg) != "hello" {
				t.Fatalf("first frame (sent with the 101): %q, %v", msg, err)
			}
			for i := range 3 {
				out := fmt.Sprintf("message %d %s", i, strings.Repeat("x", 100*i))
				if err := writeWSFrame(conn, []byte(out), true); err != nil {
					t.Fatalf("write: %v", err)
				}
				msg, err := readWSFrame(r)
				if err != nil || string(msg) != "echo:"+out {
					t.Fatalf("echo %d: %q, %v", i, msg, err)
				}
			}

			// The connection is the caller's now: the pool has let it go,
			// and serves plain requests on others.
			for origin, st := range tr.Stats() {
				if st.InUseConns != 0 {
					t.Errorf("%s: %d connections in use while the WebSocket is open, want 0 (it left the pool)", origin, st.InUseConns)
				}
			}
			if _, body := get(t, tr, url+"/plain"); body != wantPlain {
				t.Errorf("plain request while the WebSocket is open: %q, want %s", body, wantPlain)
			}
			// An origin that speaks HTTP/2 has a pool of HTTP/1.1
			// connections for upgrades beside its HTTP/2 one.
			if n, want := len(tr.Stats()), map[bool]int{false: 1, true: 2}[tc.h2]; n != want {
				t.Errorf("Stats has %d pools, want %d: %v", n, want, tr.Stats())
			}
			if err := conn.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			ws.done.Wait() // the server saw EOF and ended
			ws.mu.Lock()
			defer ws.mu.Unlock()
			if len(ws.bad) > 0 {
				t.Errorf("server: %v", ws.bad)
			}
			if len(ws.protos) != 1 || ws.protos[0] != "HTTP/1.1" {
				t.Errorf("upgrade requests came over %v, want one over HTTP/1.1", ws.protos)
			}
		})
	}
}

// A 101 that names no protocol is returned as it is, with an empty body,
// and its connection is closed rather than pooled.
func TestSwitchingProtocolsWithoutUpgradeHeader(t *testing.T) {
	srv, conns := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bare101" {
			conn, rw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			defer conn.Close()
			rw.WriteString("HTTP/1.1 101 Switching Protocols\r\n\r\n")
			rw.Flush()
			return
		}
		io.WriteString(w, "ok")
	}))
	tr := newTestTransport(t, Options{})
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL + "/bare101")
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols || len(body) != 0 {
		t.Errorf("got %d with %q, want 101 with an empty body", resp.StatusCode, body)
	}
	get(t, tr, srv.URL+"/")
	if n := conns.n.Load(); n != 2 {
		t.Errorf("server accepted %d connections, want 2 (the 101's was not reused)", n)
	}
}

// TestUpgradeWaitingOnItsBodyEndsWithTheContext: a 101 answer to a request
// whose body is still being written switches the connection once the body
// is sent; a context that ends meanwhile (here as the answer arrives, from
// GotFirstResponseByte) ends the request with the context's error, and the
// body is closed, rather than leave the caller waiting on a body nobody
// writes to.
func TestUpgradeWaitingOnItsBodyEndsWithTheContext(t *testing.T) {
	srv := startRawServer(t, func(c net.Conn, br *bufio.Reader) {
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
		io.Copy(io.Discard, c)
	})
	tr := newTestTransport(t, Options{})
	body, feed := io.Pipe()
	defer feed.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotFirstResponseByte: cancel})
	req, err := http.NewRequestWithContext(ctx, "POST", srv.url()+"/ws", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	done := make(chan error, 1)
	go func() {
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("RoundTrip: %v, want the context's error", err)
		}
	case <-time.After(10 * time.Second):
		feed.CloseWithError(io.ErrUnexpectedEOF) // let it go
		t.Fatalf("RoundTrip still waiting 10s after its context ended; with the body closed it returned %v", <-done)
	}
	if _, err := feed.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("the request body after the request ended: a write gave %v, want io.ErrClosedPipe (closed)", err)
	}
}
