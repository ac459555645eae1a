package shoalpgx

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// holdWrite is a shared connection's socket whose next write, once armed,
// blocks without writing a byte until a write deadline in the past cuts
// it, as a write to a server that stopped reading does when its caller's
// context ends before the socket has room; held is closed when that write
// blocks.
type holdWrite struct {
	net.Conn
	held    chan struct{}
	cut     chan struct{}
	mu      sync.Mutex
	armed   bool
	cutOnce sync.Once
}

func (h *holdWrite) Write(b []byte) (int, error) {
	h.mu.Lock()
	armed := h.armed
	h.armed = false
	h.mu.Unlock()
	if !armed {
		return h.Conn.Write(b)
	}
	close(h.held)
	<-h.cut
	return 0, os.ErrDeadlineExceeded
}

func (h *holdWrite) SetWriteDeadline(t time.Time) error {
	if !t.IsZero() && t.Before(time.Now()) {
		h.cutOnce.Do(func() { close(h.cut) })
	}
	return h.Conn.SetWriteDeadline(t)
}

// cutWriteRig puts a statement of sql, queued on p's one shared
// connection, into a write that the test makes as a caller with a context
// of its own, which blocks before a byte of it leaves; then the
// statement's caller gives up, with the statement out of the queue, so
// that unqueue cannot take it back: for the pool it is written. It
// returns the connection and the cut: the writer's context ends, and
// once the write has returned so does cut.
func cutWriteRig(t *testing.T, p *Pool, sql string) (*pipeConn, func()) {
	t.Helper()
	conn := oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	pgtest.WaitFor(t, 5*time.Second, "the connection quiet", func() bool {
		conn.mu.Lock()
		defer conn.mu.Unlock()
		return len(conn.pending) == 0 && !conn.writing && conn.reader == readerNone
	})
	hw := &holdWrite{Conn: conn.nc, held: make(chan struct{}), cut: make(chan struct{}), armed: true}
	conn.mu.Lock()
	conn.nc = hw
	conn.raw = nil // every write through hw
	conn.writing = true
	conn.mu.Unlock()

	qctx, giveUp := context.WithCancel(ctx)
	defer giveUp()
	gaveUp := make(chan error, 1)
	go func() {
		// Unprepared, so that it is one request.
		_, err := p.Exec(qctx, sql, pgx.QueryExecModeExec)
		gaveUp <- err
	}()
	pgtest.WaitFor(t, 5*time.Second, "the statement queued", func() bool { p, q := queueCounts(conn); return p == 1 && q == 1 })

	// The test writes, as a caller would the statements queued behind
	// its own, already answered, on a plain socket.
	wctx, cutWrite := context.WithCancel(ctx)
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		conn.mu.Lock()
		conn.writeLocked(wctx) // writing is set; returns with conn.mu released
	}()
	select {
	case <-hw.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the statement's write never started")
	}
	giveUp()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller who gave up: %v, want context.Canceled", err)
	}
	return conn, func() {
		cutWrite()
		<-wrote
	}
}

// A write cut before a byte of it left takes its statements back into the
// queue, and when nothing written is left pending then, the cancelling of
// a closing pool, which waits for the server to have answered everything
// written (drained), is told at once, as it is by the server's last
// answer: nothing is at the server. Before, nothing told it: it waited for
// its next retry, holding what callers queued, and Close, meanwhile.
//
// The rig's statement, given up on while its write blocks, is the only
// one on the connection: Close's cancelling finds it written, and waits;
// then the write is cut.
func TestPipelineCancellingToldWhenACutWriteTakesTheLastStatementBack(t *testing.T) {
	p, _ := closeTestPool(t, 2, func(c *Config) { c.CancelTimeout = 10 * time.Second })
	conn, cut := cutWriteRig(t, p, "select 1")
	closed := startClose(p)
	var drained <-chan struct{}
	pgtest.WaitFor(t, 10*time.Second, "Close cancelling the statement given up on", func() bool {
		conn.mu.Lock()
		defer conn.mu.Unlock()
		drained = conn.drained
		return conn.cancelling
	})
	cut()
	select {
	case <-drained:
	default:
		t.Fatal("the cut write took the last statement written back, and the cancelling still waits for the server to answer it")
	}
	closedWithin(t, closed, "Close waits on a connection with nothing at the server")
}

// A statement whose caller gave up while its write was blocked, and whose
// write was then cut before a byte of it left, is dropped, as one given up
// on in the queue is (unqueue): never written, it costs the server
// nothing. Before, it went back into the queue with the others and out
// once the write could go on, to run with nobody to cancel it: a closing
// pool whose cancelling had found nothing left at the server waited for
// it, an hour for this pg_sleep(3600).
func TestPipelineCloseDoesNotRunAStatementGivenUpOnInACutWrite(t *testing.T) {
	p, running := closeTestPool(t, 2, func(c *Config) { c.CancelTimeout = 10 * time.Second })
	conn, cut := cutWriteRig(t, p, "select pg_sleep(3600)")
	closed := startClose(p)
	pgtest.WaitFor(t, 10*time.Second, "Close cancelling the statement given up on", func() bool {
		conn.mu.Lock()
		defer conn.mu.Unlock()
		return conn.cancelling
	})
	cut()
	closedWithin(t, closed, "Close waits for a statement given up on before it was written")
	if n := running("select pg_sleep"); n != 0 {
		t.Fatalf("%d statements given up on before they were written run at the server", n)
	}
}
