package embedded

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"
)

// MaxWork caps the simulated work one request may ask the embedded servers
// for, so that no request can hold a server goroutine for long.
const MaxWork = time.Second

// maxLine bounds a request line of the line protocol.
const maxLine = 64

// LineServer is a TLS TCP request/response server with a line protocol:
// the client sends the number of microseconds of simulated work followed by
// a newline ("25\n"); the server waits that long and answers "ok\n". Any
// number of requests may follow on one connection. A malformed request gets
// "err\n" and the connection is closed.
type LineServer struct {
	ln net.Listener
	wg sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// StartLineServer listens on a random loopback port and serves until Close.
func StartLineServer(cert *Cert) (*LineServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("embedded: line server: %w", err)
	}
	s := &LineServer{ln: tls.NewListener(ln, cert.ServerTLS()), conns: make(map[net.Conn]struct{})}
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

// Addr returns the server's host:port.
func (s *LineServer) Addr() string { return s.ln.Addr().String() }

// Close stops the server, closes its connections and waits for its
// goroutines to end.
func (s *LineServer) Close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

func (s *LineServer) acceptLoop() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A temporary failure (out of file descriptors, say): back off
			// briefly instead of spinning.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if !s.track(c) {
			c.Close()
			return
		}
		s.wg.Add(1)
		go s.serve(c)
	}
}

// track records c so that Close can close it; false means the server is
// already closed.
func (s *LineServer) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *LineServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	r := bufio.NewReaderSize(c, maxLine)
	ok := []byte("ok\n")
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		micros, err := strconv.Atoi(string(line[:len(line)-1]))
		if err != nil || micros < 0 {
			c.Write([]byte("err\n"))
			return
		}
		if work := min(time.Duration(micros)*time.Microsecond, MaxWork); work > 0 {
			time.Sleep(work)
		}
		if _, err := c.Write(ok); err != nil {
			return
		}
	}
}
