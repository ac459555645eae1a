package shoalpgx

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// pipeConn is one connection that pipelined callers share (see the
// package doc, "Pipelining"). pgx dialled it, so that TLS, authentication,
// AfterConnect, the fence and the hosts logic all applied, and then the
// pool took it over from pgx: from there it speaks the protocol itself.
//
// Each caller's request is a self-contained run of messages ending in its
// own Sync, so that the server answers it, and succeeds or fails it, on its
// own. One writer at a time: a caller who finds nobody writing and fewer
// than pipeCorkAt requests at the server writes everything queued, then
// looks again; past that, requests wait in the queue, and the reader
// writes them out together, on a goroutine of its own, each time it has
// read all the answers that came and is about to wait for more
// (flushLocked, pipeline_read.go). One reader at a time, handing each
// answer to the oldest request still unanswered: the server answers in the
// order it was written to, and pending keeps that order. The reader is a
// caller who found nobody reading, until its own answer is in, and
// otherwise the connection's goroutine (pipeline_read.go).
type pipeConn struct {
	pc    *pooledConn // the connection as pgx dialled it: its host and typeMap
	nc    net.Conn
	fe    *pgproto3.Frontend
	tm    *typeMap
	stmts pipeStmts     // statements prepared on the connection
	done  chan struct{} // closed when readLoop has returned
	wake  chan struct{} // hands the reading to readLoop
	quit  chan struct{} // closed when the connection breaks or closes

	// For the pool's look at the connection before a request
	// (pipeline_admit.go): whether the session no longer refuses writes
	// by default, and when a look last found its standby past
	// MaxStandbyLag (UnixNano; 0 for not).
	writable  atomic.Bool
	lagSeenAt atomic.Int64

	pace pipePace // the server's pace, for the pool's fill (pipeline_fill.go)

	// Who reads (pipeline_read.go): nobody, a caller waiting for its own
	// answer, or readLoop. Only the reader touches fe's reads, and only
	// the reader finishes cur, the request it is filling: it sets and
	// clears cur under mu, and failLocked, which reads it there, leaves
	// it to the reader (failRead).
	reader int               // guarded by mu
	cur    *pipeReq          // the request being answered; nil between requests
	woke   bool              // the reader has answered a caller since it last yielded (see flushBeforeWait)
	tagged pgconn.CommandTag // the last command tag the reader read (see tag)

	mu      sync.Mutex
	queue   []*pipeReq // written next, in order; a prefix of what pending does not yet hold sent
	pending []*pipeReq // written or about to be, not yet answered, oldest first
	writing bool       // a caller or the background writer is writing queue out
	between bool       // the reader, or readLoop as it stops reading, is letting the callers it answered run (yieldLocked)
	// yieldHook, when a test sets it, is what yieldLocked runs in place
	// of runtime.Gosched, so that the test can see the reader yield and
	// let the callers it woke send before the reader goes on.
	yieldHook func()
	err       error      // why the connection broke; nil while it works
	werr      error      // a write failed, and the reader takes the last answers (pipeline_writefail.go)
	drainBy   time.Time  // when those last reads end; zero before a write failed
	spare     []*pipeReq // the writer's second queue slice, reused
	wbuf      []byte     // the writer's buffer; only the writer touches it
	rest      []byte     // what the reader's write left for the background writer (pipeline_flush.go)

	// For closing with abandoned statements pending (pipeline_close.go):
	// how long the server may take to stop them (CancelTimeout), calls of
	// dropAbandoned not yet served, what the one cancelling waits on,
	// closed when nothing written is pending, and whether cancel requests
	// are out, which keeps what callers send meanwhile queued (both
	// guarded by mu).
	cancelWait time.Duration
	drops      atomic.Int32
	drained    chan struct{}
	cancelling bool

	// For a connection whose server stops answering while the pool is
	// open (pipeline_silent.go): calls of watchAbandoned not yet served,
	// and whether it was found quiet behind an abandoned statement, which
	// keeps new statements off it (admit) until the server answers again
	// (readOne).
	watches atomic.Int32
	quiet   atomic.Bool

	// raw is the socket's, for the reader's writes that never wait
	// (pipeline_flush.go); nil when the connection is not a plain socket
	// (TLS, a DialFunc's own net.Conn).
	raw *rawWriter
}

// errPipeTxOpen fails the requests behind one that left a transaction open
// on a shared connection: they ran inside it, and the pool closes the
// connection so that the server rolls it all back.
var errPipeTxOpen = errors.New("shoalpgx: a pipelined statement left a transaction open on a shared connection; the connection was closed and the statements behind it rolled back")

// errPipeClosed is the error of a request on a connection the pool closed.
var errPipeClosed = errors.New("shoalpgx: pipelined connection closed")

// newPipeConn takes pc over from pgx and starts its reader. cancelWait is
// the pool's CancelTimeout, for closing with abandoned statements pending.
func newPipeConn(pc *pooledConn, stmtCapacity int, cancelWait time.Duration) (*pipeConn, error) {
	pg := pc.conn.PgConn()
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	err := pg.SyncConn(ctx)
	cancel()
	if err != nil {
		_ = closeAndWait(pc)
		return nil, fmt.Errorf("shoalpgx: readying a connection for pipelining: %w", err)
	}
	if pg.TxStatus() != 'I' {
		// AfterConnect left a transaction open: sharing the connection
		// would run every caller's statements inside it.
		_ = closeAndWait(pc)
		return nil, errors.New("shoalpgx: AfterConnect left a transaction open; a pipelined connection must be idle")
	}
	hc, err := pg.Hijack()
	if err != nil {
		_ = closeAndWait(pc)
		return nil, fmt.Errorf("shoalpgx: taking over a connection for pipelining: %w", err)
	}
	c := &pipeConn{pc: pc, nc: hc.Conn, fe: hc.Frontend, tm: &typeMap{m: pc.conn.TypeMap()},
		done: make(chan struct{}), wake: make(chan struct{}, 1), quit: make(chan struct{})}
	c.stmts.capacity = stmtCapacity
	c.cancelWait = cancelWait
	c.raw = plainSocket(c.nc)
	go c.readLoop()
	return c, nil
}

// pipeCorkAt is how many requests written and not yet answered keep the
// server busy enough that a new one waits in the queue rather than be
// written at once: the server works through a connection's requests one
// after another, so while it has the next one in hand, a request written
// now would only wait behind it, and one write once the next answer is
// read carries every request queued meanwhile. A write is a system call,
// which on loopback costs as much as the server's work on a small
// statement.
const pipeCorkAt = 2

// send queues preps (the preparations r's statements need) and r, and
// writes them out, with whatever else is queued, unless another caller is
// writing, who then writes it, or the reader will write it soon
// (flushLocked): when the server has pipeCorkAt requests in hand, or none
// while the reader, or readLoop as it stops reading, lets the callers it
// has just answered run (yieldLocked), whose next requests then go out
// with this one. It fails when the connection is broken. A write the
// caller makes that is still blocked when ctx ends (a server that stopped
// reading) is cut off, so that the caller returns, and goes on in the
// background (see writeLocked).
func (c *pipeConn) send(ctx context.Context, preps []*pipeReq, r *pipeReq) error {
	c.mu.Lock()
	if err := c.brokenLocked(); err != nil {
		c.mu.Unlock()
		for _, p := range preps {
			p.finish(err)
		}
		return err
	}
	for _, p := range preps {
		p.conn = c
		c.pending = append(c.pending, p)
		c.queue = append(c.queue, p)
	}
	r.conn = c
	c.pending = append(c.pending, r)
	c.queue = append(c.queue, r)
	inHand := len(c.pending) - len(c.queue)
	if c.writing || c.cancelling || inHand >= pipeCorkAt || (inHand == 0 && c.between) {
		c.mu.Unlock()
		return nil
	}
	c.writing = true
	c.writeLocked(ctx)
	return nil
}

// writeLocked writes the queue out, and what is queued while it writes,
// until it is empty or the connection breaks. ctx is the context of the
// caller writing, which cuts a write that blocks past it; the caller then
// returns, and the rest goes out in the background (writeInBackground,
// whose context is context.Background): on a plain socket the bytes the
// cut write left, so that a message half written is finished and the
// connection stays; elsewhere (TLS, whose state a cut write corrupts) the
// connection breaks, so there the caller writes only the first batch,
// which holds its own request, and leaves what others queue meanwhile to
// the background. c.mu must be held and c.writing set; it returns with
// c.mu released.
func (c *pipeConn) writeLocked(ctx context.Context) {
	for first := true; ; first = false {
		if c.brokenLocked() != nil || (len(c.queue) == 0 || c.cancelling) && c.rest == nil {
			c.writing = false
			c.mu.Unlock()
			return
		}
		if ctx.Err() != nil || !first && c.raw == nil && ctx.Done() != nil {
			// The caller writing gave up, or has written its own
			// request where a cut would break the connection: it
			// returns, and another goroutine writes on, still
			// holding c.writing.
			go c.writeInBackground()
			c.mu.Unlock()
			return
		}
		if c.rest != nil {
			// A write stopped short (the reader's, or a caller's that
			// was cut): the rest goes first.
			rest := c.rest
			c.rest = nil
			c.mu.Unlock()
			_, err := c.nc.Write(rest)
			c.mu.Lock()
			if err != nil {
				c.writing = false
				gone := c.failWriteLocked(fmt.Errorf("shoalpgx: writing to a pipelined connection: %w", err), nil)
				c.mu.Unlock()
				endLeases(gone)
				return
			}
			continue
		}
		out := c.queue
		c.queue = c.spare[:0]
		c.mu.Unlock()
		c.pace.written(out)
		b := c.joined(out)
		n, err := c.writeAll(ctx, b)
		c.mu.Lock()
		cut := err != nil && ctx.Err() != nil && c.err == nil && errors.Is(err, os.ErrDeadlineExceeded)
		if cut && n == 0 {
			// Cut before a byte left: nothing needs taking back, so the
			// requests go back to the front of the queue and out in the
			// background, and the connection stays, but for those whose
			// callers gave up while the write blocked (dropUnsentLocked).
			// If they were all that was written, nothing is at the
			// server any more, which the cancelling may be waiting to
			// hear (noteDrainedLocked).
			c.pace.unwritten(out)
			back, gone := c.dropUnsentLocked(out)
			c.queue = append(back, c.queue...)
			if len(c.pending) == len(c.queue) {
				c.noteDrainedLocked()
			}
			go c.writeInBackground()
			c.mu.Unlock()
			for _, r := range gone {
				r.build.closesUnsent()
				r.endLease()
			}
			return
		}
		var unwritten []*pipeReq
		if err != nil && n == 0 {
			unwritten = append(unwritten, out...)
		}
		clear(out)
		c.spare = out
		if cut && c.raw != nil {
			// Cut half way on a plain socket, which takes the rest as
			// well once the server reads again: the background writer
			// finishes the message, and no request on the connection
			// fails for this caller's deadline. A copy, since the
			// bytes may be a request's own buffer, which a break would
			// let the next statement take while the write goes on.
			c.rest = append([]byte(nil), b[n:]...)
			go c.writeInBackground()
			c.mu.Unlock()
			return
		}
		if err != nil {
			c.writing = false
			gone := c.failWriteLocked(fmt.Errorf("shoalpgx: writing to a pipelined connection: %w", err), unwritten)
			c.mu.Unlock()
			endLeases(gone)
			return
		}
	}
}

// cutWriteAt sets a write deadline in the past on nc when ctx ends, so that
// a write blocked on a server that stopped reading returns; the function it
// returns undoes that once the write is over. A ctx that cannot end costs
// nothing.
func cutWriteAt(ctx context.Context, nc net.Conn) (uncut func()) {
	if ctx.Done() == nil {
		return func() {}
	}
	cut := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = nc.SetWriteDeadline(time.Unix(1, 0))
		close(cut)
	})
	return func() {
		if !stop() {
			<-cut
			_ = nc.SetWriteDeadline(time.Time{})
		}
	}
}

// unqueue takes r back when it was not written yet, and reports whether it
// was: a caller that gave up before its request left costs the server
// nothing.
func (c *pipeConn) unqueue(r *pipeReq) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.queue, r)
	if i < 0 {
		return false
	}
	c.queue = slices.Delete(c.queue, i, i+1)
	c.pending = withoutReq(c.pending, r)
	return true
}

// dropUnsentLocked takes the requests of out, a write that left nothing,
// whose callers gave up while it blocked off the connection for good, as
// unqueue would have had they been in the queue: written later, they
// would run with nobody waiting, and nobody to cancel them once the
// cancelling of a closing pool has found nothing at the server. It
// returns the others, in order, reusing out, and the dropped, whose
// leases the caller ends once it let go of c.mu. c.mu must be held.
func (c *pipeConn) dropUnsentLocked(out []*pipeReq) (back, gone []*pipeReq) {
	back = out[:0]
	for _, r := range out {
		if r.onDone != nil || r.state.Load() != reqAbandoned {
			back = append(back, r)
			continue
		}
		c.pending = withoutReq(c.pending, r)
		gone = append(gone, r)
	}
	clear(out[len(back):])
	return back, gone
}

// withoutReq returns rs without r, if r is in it.
func withoutReq(rs []*pipeReq, r *pipeReq) []*pipeReq {
	if i := slices.Index(rs, r); i >= 0 {
		return slices.Delete(rs, i, i+1)
	}
	return rs
}

// broken returns why the connection broke, or nil.
func (c *pipeConn) broken() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.brokenLocked()
}

// failLocked breaks the connection: every request on it fails with err
// (after a failed write, with the write's error unless the server sent one
// of its own: readErrAfterWrite), at once, and the socket closes, which
// ends the reader. c.mu must be held. It
// returns the requests whose callers gave up, whose leases the caller of
// failLocked ends once it let go of c.mu (endLeases): ending one may close
// the connection, which takes c.mu.
//
// The request the reader is filling (cur) is the reader's to finish: it
// may be writing the answer into it, and the answer may be whole by the
// time the reader sees the break, and then it is its caller's.
func (c *pipeConn) failLocked(err error) (gone []*pipeReq) {
	if c.err != nil {
		return nil
	}
	err = c.readErrAfterWrite(err)
	c.err = err
	for _, r := range c.queue {
		r.unsent = true
	}
	for _, r := range c.pending {
		if r == c.cur {
			continue
		}
		if r.finish(err) {
			gone = append(gone, r)
		}
	}
	c.pending = nil
	c.queue = nil
	_ = closeSocket(c.nc)
	close(c.quit)
	return gone
}

// closeSocket closes nc without writing to it. tls.Conn's Close first
// sends a close_notify alert, which waits, up to five seconds, for room in
// a socket that a server no longer reading has filled; here that would be
// under c.mu, holding every caller on the connection past its context. A
// connection that breaks owes the server no alert, so under TLS the socket
// beneath is closed instead, which ends the reader's and any writer's
// calls on the TLS layer all the same.
func closeSocket(nc net.Conn) error {
	if tc, ok := nc.(*tls.Conn); ok {
		return tc.NetConn().Close()
	}
	return nc.Close()
}

// fail is failLocked for a caller that does not hold c.mu.
func (c *pipeConn) fail(err error) {
	c.mu.Lock()
	gone := c.failLocked(err)
	c.mu.Unlock()
	endLeases(gone)
}

// failRead is fail for the reader, on its way out with the connection
// broken: the request it was filling fails too, with the connection's
// error (the first, if the connection broke before err).
func (c *pipeConn) failRead(err error) {
	c.mu.Lock()
	gone := append(c.failLocked(err), c.dropCurLocked()...)
	c.mu.Unlock()
	endLeases(gone)
}

// dropCurLocked finishes the request the reader was filling with the
// connection's error, once the connection broke, and returns it if its
// caller gave up. Only the reader calls it, with c.mu held.
func (c *pipeConn) dropCurLocked() (gone []*pipeReq) {
	cur := c.cur
	if cur == nil || c.err == nil {
		return nil
	}
	c.cur = nil
	if cur.finish(c.err) {
		return []*pipeReq{cur}
	}
	return nil
}

// close closes the connection for the core pool: Terminate, then it waits
// for the server to hang up, which it does as the backend exits
// (closeTimeout at most), so that the place in MaxConns this connection
// frees is free at the server too before another connection takes it (the
// budget the whole and shared connections share gives its permit back
// when close returns; see closeAndWait). Then the socket closes and
// readLoop returns. Nobody reads when close is called: the pool closes a
// connection only once no request on it is unanswered.
func (c *pipeConn) close() error {
	c.mu.Lock()
	// Not c.writing: with nothing pending, a writer has written all it
	// had (the server answers a request only once it has all of it) and
	// is at most about to find the queue empty.
	healthy := c.err == nil && c.werr == nil && len(c.pending) == 0
	if healthy {
		_ = c.nc.SetWriteDeadline(time.Now().Add(closeTimeout))
		_, err := c.nc.Write(terminate)
		healthy = err == nil
	}
	c.mu.Unlock()
	if healthy {
		_ = c.nc.SetReadDeadline(time.Now().Add(closeTimeout))
		_, _ = io.Copy(io.Discard, c.nc)
	}
	c.fail(errPipeClosed)
	<-c.done
	return nil
}

// tag returns the command tag b holds, the last one read again when b
// repeats it, as a pool's statements mostly do, so that it allocates no
// string. Only the reader calls it.
func (c *pipeConn) tag(b []byte) pgconn.CommandTag {
	if string(b) != c.tagged.String() {
		c.tagged = pgconn.NewCommandTag(string(b))
	}
	return c.tagged
}
