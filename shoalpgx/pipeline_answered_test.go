package shoalpgx

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// A statement whose whole answer had come in when its connection broke
// gets its answer, not the connection's error: the server ran it, and
// reporting it failed would have its caller run it again. Here the reader
// holds an answer mid-way (it has read one message of it, and the rest is
// in, through its ReadyForQuery) when another caller's write fails and
// breaks the connection; then it reads on. The reader is the statement's
// own caller, or, for a statement behind another caller's, the
// connection's goroutine, to which that caller handed the reading once
// its own answer was in.
func TestPipelineAnsweredStatementOutlivesItsConnection(t *testing.T) {
	for _, before := range []int{0, 1} {
		t.Run(fmt.Sprintf("behind=%d", before), func(t *testing.T) {
			testAnsweredOutlivesConn(t, before)
		})
	}
}

func testAnsweredOutlivesConn(t *testing.T, before int) {
	var held heldDialer
	p := newPipelinedPool(t, 2, 4, func(c *Config) { c.ConnConfig.DialFunc = held.dial })
	ctx := pgtest.Ctx(t)
	// The whole connection taken, so that the budget of 2 leaves one
	// shared connection, and every statement goes on it.
	whole, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Release()
	// Run once, so that the statements the test holds need no
	// preparation on the connection: their answers are all that comes.
	var n int
	if err := p.QueryRow(ctx, "select $1::int", 1).Scan(&n); err != nil {
		t.Fatal(err)
	}
	// Capped at one, besides: the held answer keeps its statement at the
	// server past PipelineFill on a slow run, and a shared pool that could
	// still grow (under the budget's division, by asking it) would have
	// the statement below wait for another connection (Config.Avoid)
	// rather than go behind the held one, whose write fails.
	hc := held.of(t, oneSharedConn(t, p))
	// Before the pool's Close (cleanups run last first): a held read
	// never ends on its own.
	t.Cleanup(hc.releaseHeld)

	hc.holdAnswer(before)
	type answer struct {
		want, n int
		err     error
	}
	answers := make(chan answer, before+2)
	query := func(want int) {
		a := answer{want: want}
		a.err = p.QueryRow(ctx, "select $1::int", want).Scan(&a.n)
		answers <- a
	}
	go query(7)
	if before > 0 {
		// The first caller reads, waiting for both answers; the
		// second's statement goes out behind its own.
		waitShut(t, ctx, hc.reading, "the first caller's read")
		go query(8)
	}
	waitShut(t, ctx, hc.held, "the held answer")
	hc.failWrites()
	// Its write fails, and nothing of it left: once the broken
	// connection is replaced, it goes to the new one.
	go query(2)
	waitShut(t, ctx, hc.writeFailed, "the failed write")
	hc.releaseHeld()
	for range before + 2 {
		a := <-answers
		if a.err != nil || a.n != a.want {
			t.Errorf("the statement asking for %d: %d, %v; want %[1]d, nil", a.want, a.n, a.err)
		}
	}
	// The pool replaces the broken connection.
	if _, err := p.Exec(ctx, "select 3"); err != nil {
		t.Fatalf("a statement after the break: %v", err)
	}
}

// waitShut waits for ch to close, failing the test if ctx ends first.
func waitShut(t *testing.T, ctx context.Context, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-ctx.Done():
		t.Fatalf("%s never came", what)
	}
}

// heldDialer is a DialFunc whose sockets are heldConns, which it finds
// again under the pool's connections.
type heldDialer struct {
	mu    sync.Mutex
	conns []*heldConn
}

func (d *heldDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	nc, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	hc := newHeldConn(nc)
	d.mu.Lock()
	d.conns = append(d.conns, hc)
	d.mu.Unlock()
	return hc, nil
}

// of returns the heldConn under the shared connection c.
func (d *heldDialer) of(t *testing.T, c *pipeConn) *heldConn {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, hc := range d.conns {
		if hc.opened(c.nc) {
			return hc
		}
	}
	t.Fatalf("the shared connection's socket (%T) is none the DialFunc made", c.nc)
	return nil
}

// errHeldWrite is the failure heldConn's writes return once failWrites ran.
var errHeldWrite = errors.New("heldConn: write refused by the test")

// heldConn is a socket that can hold an answer mid-way. Once holdAnswer(k)
// ran, its next Read (which closes reading) collects what the server sends
// until k+1 answers are in, up to their ReadyForQuery, and hands the
// reader the first k of them and the first message of the next; the Read
// after that closes held and gives the rest only once releaseHeld ran,
// even after Close, as if the reader had it buffered already. failWrites
// makes its writes fail without sending anything.
type heldConn struct {
	net.Conn
	reading, held, release chan struct{}
	writeFailed            chan struct{} // closed at the first write failWrites refused
	heldOnce, releaseOnce  sync.Once
	failOnce               sync.Once

	mu        sync.Mutex
	armed     bool
	before    int // answers handed over whole before the held one
	rest      []byte
	refuseAll bool
}

func newHeldConn(nc net.Conn) *heldConn {
	return &heldConn{Conn: nc, reading: make(chan struct{}), held: make(chan struct{}), release: make(chan struct{}), writeFailed: make(chan struct{})}
}

// opened reports whether nc is h, perhaps inside the pool's wrapper.
func (h *heldConn) opened(nc net.Conn) bool {
	if g, ok := nc.(*cancelGate); ok {
		nc = g.Conn
	}
	return nc == net.Conn(h)
}

func (h *heldConn) holdAnswer(before int) {
	h.mu.Lock()
	h.armed, h.before = true, before
	h.mu.Unlock()
}

func (h *heldConn) releaseHeld() { h.releaseOnce.Do(func() { close(h.release) }) }

func (h *heldConn) failWrites() {
	h.mu.Lock()
	h.refuseAll = true
	h.mu.Unlock()
}

func (h *heldConn) Write(b []byte) (int, error) {
	h.mu.Lock()
	refuse := h.refuseAll
	h.mu.Unlock()
	if refuse {
		h.failOnce.Do(func() { close(h.writeFailed) })
		return 0, errHeldWrite
	}
	return h.Conn.Write(b)
}

func (h *heldConn) Read(b []byte) (int, error) {
	h.mu.Lock()
	armed, before, rest := h.armed, h.before, h.rest
	h.armed = false
	h.mu.Unlock()
	if rest != nil {
		// The reader took the messages it was given and is back for
		// more: the held answer is the one it fills.
		h.heldOnce.Do(func() { close(h.held) })
		<-h.release
		n := copy(b, rest)
		h.mu.Lock()
		if h.rest = rest[n:]; len(h.rest) == 0 {
			h.rest = nil
		}
		h.mu.Unlock()
		return n, nil
	}
	if !armed {
		return h.Conn.Read(b)
	}
	close(h.reading)
	var in []byte
	buf := make([]byte, 4096)
	cut := 0
	for cut == 0 {
		n, err := h.Conn.Read(buf)
		in = append(in, buf[:n]...)
		if err != nil {
			return 0, err
		}
		cut = cutAnswers(in, before)
	}
	n := copy(b, in[:cut])
	h.mu.Lock()
	h.rest = in[n:]
	h.mu.Unlock()
	return n, nil
}

// cutAnswers returns where to cut b, once it holds before+1 answers whole,
// each ending in its ReadyForQuery: after the first before answers and the
// first message of the next. It returns 0 until then.
func cutAnswers(b []byte, before int) int {
	cut, answers := 0, 0
	for off := 0; len(b)-off >= 5; {
		n := 1 + int(binary.BigEndian.Uint32(b[off+1:off+5]))
		if len(b)-off < n {
			return 0
		}
		if answers == before && cut == 0 {
			cut = off + n
		}
		if b[off] == 'Z' {
			if answers++; answers > before {
				return cut
			}
		}
		off += n
	}
	return 0
}
