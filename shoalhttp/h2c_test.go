//lint:file-ignore SA1019 tests need x/net's per-connection ServeConn (to hang up the connections they serve, or send GOAWAY on them), which net/http does not offer.

package shoalhttp

import (
	"net"
	"net/http"
	"sync"
	"testing"

	"golang.org/x/net/http2"
)

// h2cTestServer serves HTTP/2 with prior knowledge on a loopback listener,
// one x/net ServeConn per connection, so that a test can count the
// connections, hang them up, or send GOAWAY on them (base.Shutdown).
type h2cTestServer struct {
	addr string
	base *http.Server

	mu    sync.Mutex
	conns []net.Conn // server ends, in the order accepted
}

// startH2C starts an h2c server for handler, stopped when the test ends.
func startH2C(t *testing.T, handler http.Handler) *h2cTestServer {
	t.Helper()
	return startH2CLimited(t, handler, nil)
}

// startH2CLimited is startH2C whose i-th connection (from 0) announces
// limit(i) concurrent streams; a nil limit leaves x/net's default.
func startH2CLimited(t *testing.T, handler http.Handler, limit func(i int) uint32) *h2cTestServer {
	t.Helper()
	s := &h2cTestServer{base: &http.Server{Handler: handler}}
	h2s := &http2.Server{}
	if err := http2.ConfigureServer(s.base, h2s); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	var serving sync.WaitGroup
	serving.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			serve := h2s
			if limit != nil {
				serve = &http2.Server{MaxConcurrentStreams: limit(len(s.conns))}
			}
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			serving.Go(func() { serve.ServeConn(c, &http2.ServeConnOpts{BaseConfig: s.base, Handler: handler}) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		s.hangUp()
		serving.Wait()
	})
	return s
}

// url returns the server's base URL.
func (s *h2cTestServer) url() string { return "http://" + s.addr }

// accepted returns how many connections the server has accepted.
func (s *h2cTestServer) accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// hangUp closes every connection the server has accepted so far.
func (s *h2cTestServer) hangUp() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
}
