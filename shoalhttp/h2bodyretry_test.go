package shoalhttp

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// closeSignalConn is a dialled connection that closes closed on its first
// Close: for an HTTP/2 connection the server hung up on, that Close is x/net's
// read loop's, made after it has marked the connection closed.
type closeSignalConn struct {
	net.Conn
	once   sync.Once
	closed chan struct{}
}

func (c *closeSignalConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// closableBody is a request body that http.NewRequest cannot rewind (it
// sets no GetBody for it) and that cannot be read once closed, as a pipe.
type closableBody struct {
	r      io.Reader
	closes atomic.Int32
	closed chan struct{}
}

func (b *closableBody) Read(p []byte) (int, error) {
	if b.closes.Load() > 0 {
		return 0, errors.New("read after Close")
	}
	return b.r.Read(p)
}

func (b *closableBody) Close() error {
	if b.closes.Add(1) == 1 {
		close(b.closed)
	}
	return nil
}

// An HTTP/2 connection that goes unusable between the pool's acquire and
// the send (here the server hangs up on it while the request's GotConn
// runs, after BeforeAcquire found it usable) fails the request with x/net's
// "client conn not usable" before any of the body is read. The request goes
// to a new connection with its body as it is, GetBody or not, as net/http
// does, and the server gets the body whole, once: x/net's Close of the body
// on the failed attempt is held back until the body has been sent.
func TestHTTP2UnusableConnRetriesUnreadBodyWithoutGetBody(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := startH2C(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if r.Method == http.MethodPost {
			mu.Lock()
			bodies = append(bodies, string(b))
			mu.Unlock()
		}
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Write(b)
	}))
	tr := newTestTransport(t, Options{
		H2CPriorKnowledge: true,
		MinConns:          -1, // one connection, so that the request takes the one warmed
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &closeSignalConn{Conn: nc, closed: make(chan struct{})}, nil
		},
	})
	url := srv.url()
	if code, _ := get(t, tr, url+"/"); code != 200 { // the connection has carried a request
		t.Fatalf("first request: status %d", code)
	}

	var hungUp atomic.Bool
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if !hungUp.CompareAndSwap(false, true) {
			return
		}
		srv.hangUp()
		select {
		case <-info.Conn.(*closeSignalConn).closed:
		case <-time.After(10 * time.Second):
			t.Error("x/net never closed the connection the server hung up on")
		}
	}}
	const payload = "a streaming body, sent once and whole"
	body := &closableBody{r: strings.NewReader(payload), closed: make(chan struct{})}
	ctx, cancel := context.WithTimeout(httptrace.WithClientTrace(context.Background(), trace), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/echo", body)
	if err != nil {
		t.Fatal(err)
	}
	if req.GetBody != nil {
		t.Fatal("the request has a GetBody; the test needs one without")
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("request on a connection gone unusable before the send: %v", err)
	}
	echo, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || string(echo) != payload {
		t.Fatalf("got %d %q (%v), want 200 %q", resp.StatusCode, echo, err, payload)
	}
	select { // x/net closes a body it has sent after the round trip
	case <-body.closed:
	case <-ctx.Done():
		t.Fatal("the request body was never closed")
	}
	if n := body.closes.Load(); n != 1 {
		t.Errorf("request body closed %d times, want 1", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 || bodies[0] != payload {
		t.Fatalf("server got bodies %q, want %q once", bodies, payload)
	}
	if n := srv.accepted(); n != 2 {
		t.Errorf("server accepted %d connections, want 2", n)
	}
}

// A request without GetBody whose body x/net has begun to send is never
// sent again, even on an error that says the server did not process it
// (here REFUSED_STREAM after the first DATA frame): the rest of the body
// would go out without its start.
func TestHTTP2PartlySentBodyWithoutGetBodyIsNotRetried(t *testing.T) {
	var streams atomic.Int32
	addr := serveTCP(t, func(c net.Conn) { refuseAfterFirstData(c, &streams) })
	tr := newTestTransport(t, Options{H2CPriorKnowledge: true, MinConns: -1})

	// A pipe, which x/net's Close of the body unblocks.
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte("the first part; the rest never comes"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/", pr)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("a request refused after part of its body was sent succeeded")
	}
	var se http2.StreamError
	if !errors.As(err, &se) || se.Code != http2.ErrCodeRefusedStream {
		t.Fatalf("error %v, want the refused stream's", err)
	}
	if n := streams.Load(); n != 1 {
		t.Fatalf("server saw %d streams, want 1 (no retry)", n)
	}
}

// refuseAfterFirstData serves raw HTTP/2 frames on c: it refuses every
// stream once its first DATA frame has arrived, and counts the streams.
func refuseAfterFirstData(c net.Conn, streams *atomic.Int32) {
	defer c.Close()
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil {
		return
	}
	fr := http2.NewFramer(c, c)
	if fr.WriteSettings() != nil {
		return
	}
	refused := map[uint32]bool{}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() && fr.WriteSettingsAck() != nil {
				return
			}
		case *http2.PingFrame:
			if !f.IsAck() && fr.WritePing(true, f.Data) != nil {
				return
			}
		case *http2.HeadersFrame:
			streams.Add(1)
		case *http2.DataFrame:
			id := f.Header().StreamID
			if len(f.Data()) > 0 && !refused[id] {
				refused[id] = true
				if fr.WriteRSTStream(id, http2.ErrCodeRefusedStream) != nil {
					return
				}
			}
		}
	}
}
