package shoalhttp

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestCloseWaitsForHTTP2ReadLoops: Close returns only once the read loop
// of every HTTP/2 connection has ended, over h2c and over TLS. The test's
// sockets make the read loop slow to see its socket close (a read failed
// by the close returns at most slowReadExit later), so that a Close that
// does not wait for it returns while the loop still runs.
func TestCloseWaitsForHTTP2ReadLoops(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) })
	h2c := startH2C(t, h)
	tlsSrv, _, cfg := newH2TLSServer(t, h, 100)
	for _, tc := range []struct{ name, url string }{{"h2c", h2c.url()}, {"tls", tlsSrv.URL}} {
		t.Run(tc.name, func(t *testing.T) {
			released := make(chan struct{})
			defer close(released)
			var d net.Dialer
			tr, err := NewTransport(Options{
				TLSClientConfig:   cfg,
				H2CPriorKnowledge: true,
				DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
					nc, err := d.DialContext(ctx, network, addr)
					if err != nil {
						return nil, err
					}
					return &slowReadExitConn{Conn: nc, released: released}, nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			// Warm waits for the pool's floor of connections, so that no
			// dial is under way when Close starts.
			if err := tr.Warm(context.Background(), tc.url); err != nil {
				t.Fatal(err)
			}
			if _, body := get(t, tr, tc.url); body != "HTTP/2.0" {
				t.Fatalf("got %q, want HTTP/2.0", body)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := tr.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if n := slowReadLoops(); n > 0 {
				t.Errorf("%d HTTP/2 read loops still run after Close returned", n)
			}
		})
	}
}

// slowReadExit bounds how long a slowReadExitConn holds a read that its
// Close failed.
const slowReadExit = time.Second

// slowReadExitConn is a socket whose reader learns of its Close late: a
// read that fails after Close returns when released is closed, or after
// slowReadExit.
type slowReadExitConn struct {
	net.Conn
	closed   atomic.Bool
	released <-chan struct{}
}

func (c *slowReadExitConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil && c.closed.Load() {
		select {
		case <-c.released:
		case <-time.After(slowReadExit):
		}
	}
	return n, err
}

func (c *slowReadExitConn) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

// slowReadLoops counts the x/net read loops reading a slowReadExitConn.
func slowReadLoops() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("(*clientConnReadLoop).run")) && bytes.Contains(g, []byte("(*slowReadExitConn).Read")) {
			count++
		}
	}
	return count
}
