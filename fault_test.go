package shoal_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// faultServer is a line-protocol server on loopback ("ping" -> "pong") that
// can be told to reset new and existing connections, or to stall: accept
// and never answer.
type faultServer struct {
	ln    net.Listener
	mode  atomic.Int32 // serveOK, serveReset, serveStall
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

const (
	serveOK int32 = iota
	serveReset
	serveStall
)

func startFaultServer(t *testing.T) *faultServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &faultServer{ln: ln}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.stop)
	return s
}

func (s *faultServer) addr() string { return s.ln.Addr().String() }

func (s *faultServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		if s.mode.Load() == serveReset {
			resetConn(c)
			continue
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(c)
	}
}

func (s *faultServer) serve(c net.Conn) {
	defer s.wg.Done()
	r := bufio.NewReader(c)
	for {
		if _, err := r.ReadString('\n'); err != nil {
			c.Close()
			return
		}
		if s.mode.Load() == serveStall {
			continue // never answer
		}
		if _, err := io.WriteString(c, "pong\n"); err != nil {
			return
		}
	}
}

// resetAll resets every connection the server holds (an RST, not a FIN).
func (s *faultServer) resetAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		resetConn(c)
	}
	s.conns = nil
}

func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

func (s *faultServer) stop() {
	s.ln.Close()
	s.resetAll()
	s.wg.Wait()
}

// lineConn is the client side: one request, one answer, under a deadline.
type lineConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *lineConn) ping(ctx context.Context) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(5 * time.Second)
	}
	c.SetDeadline(deadline)
	// The round trip ends when ctx does (a dial's timeout, the pool's
	// Close), as a real client's does, not only at ctx's deadline. Set
	// after the deadline above, so that it wins; waited for if it ran, so
	// that it cannot cut a later round trip short.
	cut := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.SetDeadline(time.Unix(1, 0))
		close(cut)
	})
	defer func() {
		if !stop() {
			<-cut
		}
	}()
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		return err
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		return err
	}
	if line != "pong\n" {
		return errors.New("bad answer " + line)
	}
	return nil
}

func linePool(t *testing.T, addr string, cfg shoal.Config[*lineConn]) *shoal.Pool[*lineConn] {
	var d net.Dialer
	cfg.Dial = func(ctx context.Context) (*lineConn, error) {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		lc := &lineConn{Conn: c, r: bufio.NewReader(c)}
		if err := lc.ping(ctx); err != nil { // the handshake
			c.Close()
			return nil, err
		}
		return lc, nil
	}
	cfg.Close = func(c *lineConn) error { return c.Close() }
	p, err := shoal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

func TestFaultRefusedDialFailsPromptly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nobody listens: connections are refused
	p := linePool(t, addr, shoal.Config[*lineConn]{MaxConns: 4})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = p.Acquire(ctx)
	if !errors.Is(err, syscall.ECONNREFUSED) || !errors.Is(err, shoal.ErrDial) {
		t.Fatalf("got %v, want the refused dial", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the acquire sat until its deadline")
	}
}

func TestFaultResetConnectionsAreReplaced(t *testing.T) {
	s := startFaultServer(t)
	broken := func(err error) bool {
		return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE)
	}
	p := linePool(t, s.addr(), shoal.Config[*lineConn]{MaxConns: 4, Broken: broken})
	ctx := context.Background()
	for i := 0; i < 8; i++ {
		if err := p.Do(ctx, func(c *lineConn) error { return c.ping(ctx) }); err != nil {
			t.Fatal(err)
		}
	}
	s.resetAll()
	// Calls on the reset connections fail and discard them; the pool dials
	// fresh ones and later calls succeed. Bounded: at most 4 failures.
	failures := 0
	for i := 0; i < 20; i++ {
		if err := p.Do(ctx, func(c *lineConn) error { return c.ping(ctx) }); err != nil {
			if !broken(err) {
				t.Fatalf("unexpected error %v", err)
			}
			failures++
		}
	}
	if failures > 4 {
		t.Fatalf("%d failures after resetting 4 connections at most", failures)
	}
	if err := p.Do(ctx, func(c *lineConn) error { return c.ping(ctx) }); err != nil {
		t.Fatalf("pool did not recover: %v", err)
	}
}

func TestFaultHealthCheckDropsResetIdleConnections(t *testing.T) {
	s := startFaultServer(t)
	// Every idle connection is checked before it is handed out: the one
	// below has been idle for the syscalls of resetAll at least, far longer
	// than a nanosecond.
	p := linePool(t, s.addr(), shoal.Config[*lineConn]{
		MaxConns: 2, HealthCheckAfter: time.Nanosecond,
		HealthCheck: func(ctx context.Context, c *lineConn) error { return c.ping(ctx) },
	})
	ctx := context.Background()
	if err := p.Do(ctx, func(c *lineConn) error { return c.ping(ctx) }); err != nil {
		t.Fatal(err)
	}
	s.resetAll()
	// The reset idle connection fails its check and is replaced before
	// the caller ever sees it.
	if err := p.Do(ctx, func(c *lineConn) error { return c.ping(ctx) }); err != nil {
		t.Fatalf("caller saw a dead connection: %v", err)
	}
}

// A server that accepts and never answers: a dial hangs in its handshake.
func TestFaultStalledServerTimesOut(t *testing.T) {
	s := startFaultServer(t)
	s.mode.Store(serveStall)
	// A caller with time to spare gets the dial's timeout when it comes,
	// not its own deadline.
	t.Run("dial timeout first", func(t *testing.T) {
		p := linePool(t, s.addr(), shoal.Config[*lineConn]{MaxConns: 2, DialTimeout: 50 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := p.Acquire(ctx)
		var ne net.Error
		if !errors.Is(err, shoal.ErrDial) || !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("got %v, want the dial's timeout", err)
		}
		if ctx.Err() != nil {
			t.Fatal("the acquire sat until its own deadline instead of the dial's")
		}
	})
	// A caller whose deadline comes before the dial's timeout gets its own
	// deadline's error then, while the dial still hangs: an acquire never
	// waits past its context for a dial.
	t.Run("caller deadline first", func(t *testing.T) {
		p := linePool(t, s.addr(), shoal.Config[*lineConn]{MaxConns: 2, DialTimeout: time.Minute})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := p.Acquire(ctx)
		var ae *shoal.AcquireError
		if !errors.As(err, &ae) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, shoal.ErrDial) {
			t.Fatalf("got %v, want an AcquireError with the caller's deadline, not a dial's error", err)
		}
		if st := p.Stats(); st.Dialing != 1 {
			t.Fatalf("%+v; want the dial still hanging when the caller's deadline came", st)
		}
	})
}

func TestFaultServerComesBack(t *testing.T) {
	s := startFaultServer(t)
	s.mode.Store(serveReset)
	p := linePool(t, s.addr(), shoal.Config[*lineConn]{MaxConns: 4, MinIdle: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err := p.Acquire(ctx)
	cancel()
	if err == nil {
		t.Fatal("acquired from a server that resets every connection")
	}
	s.mode.Store(serveOK)
	shoal.WaitFor(t, "the pool refilled to MinIdle after the server came back", func() bool { return p.Stats().IdleConns >= 2 })
}
