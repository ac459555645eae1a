package shoalpgx

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// stallProxy forwards TCP connections to an upstream address on loopback
// and can hold every byte in flight, in both directions, without closing
// anything: the network of a blackholed route or a long retransmission, as
// the pool's connections see it. It can also silence the connections open
// now for good, while later ones work: a firewall that lost its state, an
// address moved away.
type stallProxy struct {
	ln       net.Listener
	upstream string

	mu       sync.Mutex
	cond     *sync.Cond
	held     bool
	closed   bool
	conns    []net.Conn
	silenced map[net.Conn]bool // what is read from these is dropped
	wg       sync.WaitGroup
}

// startStallProxy listens on a free loopback port and forwards to upstream
// until the test ends.
func startStallProxy(t *testing.T, upstream string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stallProxy{ln: ln, upstream: upstream}
	s.cond = sync.NewCond(&s.mu)
	s.wg.Go(s.accept)
	t.Cleanup(s.stop)
	return s
}

// addr is where the pool dials.
func (s *stallProxy) addr() string { return s.ln.Addr().String() }

// hold stops forwarding (on) or lets the held bytes go (off).
func (s *stallProxy) hold(on bool) {
	s.mu.Lock()
	s.held = on
	s.mu.Unlock()
	s.cond.Broadcast()
}

// silence makes every connection open now drop what either side sends it,
// for good, without closing; connections accepted later are forwarded.
func (s *stallProxy) silence() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.silenced == nil {
		s.silenced = map[net.Conn]bool{}
	}
	for _, c := range s.conns {
		s.silenced[c] = true
	}
}

func (s *stallProxy) accept() {
	for {
		client, err := s.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", s.upstream)
		if err != nil {
			client.Close()
			continue
		}
		if !s.track(client, server) {
			return
		}
		s.wg.Go(func() { s.pipe(server, client) })
		s.wg.Go(func() { s.pipe(client, server) })
	}
}

// track remembers a pair of connections for stop; false once stopped.
func (s *stallProxy) track(conns ...net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	s.conns = append(s.conns, conns...)
	return true
}

// pipe copies src to dst, waiting before each write while bytes are held,
// and dropping what a silenced src sends.
func (s *stallProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			s.mu.Lock()
			for s.held && !s.closed {
				s.cond.Wait()
			}
			silent := s.silenced[src]
			s.mu.Unlock()
			if silent {
				continue
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				src.Close()
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if tc, ok := dst.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
					return
				}
			}
			dst.Close()
			return
		}
	}
}

// stop closes the listener and every connection and waits for the copies.
func (s *stallProxy) stop() {
	s.mu.Lock()
	s.closed = true
	conns := s.conns
	s.mu.Unlock()
	s.cond.Broadcast()
	s.ln.Close()
	for _, c := range conns {
		c.Close()
	}
	s.wg.Wait()
}
