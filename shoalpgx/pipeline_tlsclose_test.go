package shoalpgx

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// A shared connection over TLS that breaks while its server reads nothing
// (the socket's buffer full) closes without writing: no close_notify alert
// waits on the server with the connection's lock held, where it would keep
// the callers on the connection from returning at their deadlines. Here
// the socket under TLS stops taking writes for good once the connection
// works, as a server that stopped reading would, until it is closed.
func TestPipelineTLSBreakWritesNothing(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, func(c *Config) {
		// Debian's self-signed certificate: encryption is what is tested.
		c.ConnConfig.TLSConfig = &tls.Config{InsecureSkipVerify: true}
		c.ConnConfig.Fallbacks = nil
		dial := c.ConnConfig.DialFunc
		c.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return newStallConn(nc), nil
		}
	})
	conn := oneSharedConn(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var n int
	if err := p.QueryRow(ctx, "select $1::int", 1).Scan(&n); err != nil || n != 1 {
		t.Fatalf("before the stall: %d, %v", n, err)
	}
	tc, ok := conn.nc.(*tls.Conn)
	if !ok {
		t.Fatalf("the shared connection is a %T, not TLS", conn.nc)
	}
	stalled, ok := findGate(tc).Conn.(*stallConn)
	if !ok {
		t.Fatal("no stallConn under the gate")
	}
	stalled.stall()
	// Run before the pool's cleanup, so that a failing run ends.
	t.Cleanup(stalled.unstall)

	broke := make(chan struct{})
	go func() {
		conn.fail(errors.New("broken by the test"))
		close(broke)
	}()
	select {
	case <-broke:
	case <-time.After(10 * time.Second):
		t.Fatal("breaking the connection waited on a write to a socket the server no longer reads")
	}
	if got := stalled.writesStalled(); got != 0 {
		t.Errorf("%d writes to the stalled socket as the connection broke, want none", got)
	}
	if err := p.QueryRow(ctx, "select $1::int", 2).Scan(&n); err != nil || n != 2 {
		t.Fatalf("after the break: %d, %v", n, err)
	}
}

// stallConn is a socket whose writes, once stall is called, block until
// it is closed, whatever their deadline: a peer that reads nothing more.
type stallConn struct {
	net.Conn
	mu      sync.Mutex
	stalled bool
	blocked int
	closed  chan struct{}
	once    sync.Once
}

func newStallConn(nc net.Conn) *stallConn {
	return &stallConn{Conn: nc, closed: make(chan struct{})}
}

func (s *stallConn) stall() {
	s.mu.Lock()
	s.stalled = true
	s.mu.Unlock()
}

// writesStalled counts the writes made since stall.
func (s *stallConn) writesStalled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blocked
}

func (s *stallConn) Write(b []byte) (int, error) {
	s.mu.Lock()
	stalled := s.stalled
	if stalled {
		s.blocked++
	}
	s.mu.Unlock()
	if stalled {
		<-s.closed
		return 0, net.ErrClosed
	}
	return s.Conn.Write(b)
}

// unstall lets the stalled writes return, failed.
func (s *stallConn) unstall() { s.once.Do(func() { close(s.closed) }) }

func (s *stallConn) Close() error {
	s.unstall()
	return s.Conn.Close()
}
