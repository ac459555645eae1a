package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// Reading a shared connection. One goroutine at a time reads, and who it is
// moves: a caller that finds nobody reading once its request is written
// reads the answers itself until its own is in, as a caller of a whole
// connection does, so that a lone caller pays no hand-off between
// goroutines; then, if other requests wait for answers, it hands the
// reading to the connection's goroutine (readLoop), which reads while any
// are pending and gives the reading up once every answer is in. A caller whose context ends while it reads interrupts its
// read with a deadline in the past, hands over, and returns: the protocol
// reader keeps what it had read of a message, and readLoop goes on from
// there.
//
// Before a read that waits for the server, the reader lets the callers it
// has just answered run first, and then writes out what is queued
// (flushBeforeWait): a caller that has its answer usually sends its next
// request at once, and those requests then leave in one write, as a
// batch of a pgx pipeline would, rather than one write each.

// Who reads.
const (
	readerNone = iota
	readerCaller
	readerLoop
)

// readLoop reads whenever a caller hands it the reading, until nothing is
// pending, and returns when the connection breaks or closes. It gives the
// reading up as soon as every answer is in, before it lets the callers it
// answered last run: a caller that found it reading would otherwise keep it
// reading, each statement sent during that yield waiting for readLoop's
// answer, and the next, even once the callers had thinned out to one.
func (c *pipeConn) readLoop() {
	defer close(c.done)
	for {
		select {
		case <-c.wake:
		case <-c.quit:
			// Broken, perhaps just after a caller handed the reading
			// over: the request it left half answered is ours.
			c.mu.Lock()
			ours := c.reader == readerLoop
			c.mu.Unlock()
			if ours {
				c.finishCur()
			}
			return
		}
		for {
			c.mu.Lock()
			if c.err != nil {
				c.mu.Unlock()
				c.finishCur()
				return
			}
			if len(c.pending) == 0 && c.cur == nil {
				// Every answer is in: the reading stops before the
				// callers just answered run, so that one who sends
				// meanwhile reads its own answer (readFor), as a lone
				// caller does, and what they send leaves in one write
				// once they have run.
				c.reader = readerNone
				c.yieldLocked()
				c.flushLocked()
				c.mu.Unlock()
				break
			}
			c.mu.Unlock()
			c.flushBeforeWait()
			if err := c.readOne(); err != nil {
				c.failRead(err)
				return
			}
		}
	}
}

// readFor reads, on r's caller's goroutine, until r is answered, when
// nobody else is reading; it returns at once otherwise. It stops early when
// ctx ends, so that the caller returns at once.
func (c *pipeConn) readFor(ctx context.Context, r *pipeReq) {
	c.mu.Lock()
	if c.reader != readerNone || c.err != nil {
		c.mu.Unlock()
		return
	}
	c.reader = readerCaller
	c.mu.Unlock()
	c.woke = false // a new reader has answered nobody yet

	var stop func() bool
	var interrupted chan struct{}
	if ctx.Done() != nil {
		interrupted = make(chan struct{})
		stop = context.AfterFunc(ctx, func() {
			_ = c.nc.SetReadDeadline(time.Now().Add(-time.Second))
			close(interrupted)
		})
	}
	for r.state.Load() == reqWaiting {
		c.flushBeforeWait()
		err := c.readOne()
		if err == nil {
			continue
		}
		if interrupted != nil && ctx.Err() != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			break // ctx ended: readLoop goes on where this read stopped
		}
		c.failRead(err)
		if stop != nil {
			stop()
		}
		return
	}
	if stop != nil && !stop() {
		<-interrupted // the interruption ran: undo its deadline
		c.restoreReadDeadline()
	}
	c.mu.Lock()
	if c.err == nil && (len(c.pending) > 0 || c.cur != nil) {
		c.reader = readerLoop
		c.mu.Unlock()
		c.wake <- struct{}{}
		return
	}
	c.reader = readerNone
	broke := c.err != nil
	c.mu.Unlock()
	if broke {
		// Nobody reads a broken connection after this caller (readFor
		// and readLoop both stop at c.err), so what it was filling is
		// its to finish.
		c.finishCur()
	}
}

// finishCur is for the reader leaving a broken connection: the request it
// was filling gets its answer if the rest of it, up to its ReadyForQuery,
// is already in the protocol reader's buffer (readOne then finishes it),
// and the connection's error otherwise.
func (c *pipeConn) finishCur() {
	for c.cur != nil && c.fe.ReadBufferLen() > 0 {
		if err := c.readOne(); err != nil {
			break
		}
	}
	c.mu.Lock()
	gone := c.dropCurLocked()
	c.mu.Unlock()
	endLeases(gone)
}

// readOne reads one message and files it with the request it answers,
// completing the request at its ReadyForQuery. Only the reader calls it.
// An error it returns is the read's; the connection's own failures (a
// FATAL error from the server, a transaction left open) it handles itself,
// returning errPipeClosed.
func (c *pipeConn) readOne() error {
	msg, err := c.fe.Receive()
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return err
		}
		return fmt.Errorf("shoalpgx: reading from a pipelined connection: %w", err)
	}
	switch m := msg.(type) {
	case *pgproto3.NoticeResponse:
		// A RAISE NOTICE, say: to ConnConfig.OnNotice as pgx would, with
		// the shared connection's PgConn, to be read, not used.
		if f := c.pc.conn.Config().OnNotice; f != nil {
			f(c.pc.conn.PgConn(), (*pgconn.Notice)(pgconn.ErrorResponseToPgError((*pgproto3.ErrorResponse)(m))))
		}
		return nil
	case *pgproto3.ParameterStatus:
		// Asynchronous: no request's answer. A read pool's session made
		// writable is closed at its next acquire (pipeline_admit.go).
		if m.Name == "default_transaction_read_only" && m.Value != "on" {
			c.writable.Store(true)
		}
		return nil
	case *pgproto3.NotificationResponse:
		return nil // asynchronous: no request's answer
	case *pgproto3.ErrorResponse:
		if m.Severity == "FATAL" || m.Severity == "PANIC" || m.SeverityUnlocalized == "FATAL" {
			// The server ends the session (pg_terminate_backend, a
			// shutdown): every request on it fails with its error.
			c.failRead(pgconn.ErrorResponseToPgError(m))
			return errPipeClosed
		}
	}
	cur := c.cur
	if cur == nil {
		c.mu.Lock()
		if c.err != nil {
			c.mu.Unlock()
			return errPipeClosed
		}
		if len(c.pending) == 0 {
			c.mu.Unlock()
			return fmt.Errorf("shoalpgx: pipelined connection: unexpected message %T with no request in flight", msg)
		}
		cur = c.pending[0]
		c.cur = cur
		c.mu.Unlock()
	}
	rfq, ok := msg.(*pgproto3.ReadyForQuery)
	if !ok {
		cur.take(msg)
		return nil
	}
	c.pace.answered(cur)
	if c.quiet.Load() {
		c.quiet.Store(false) // it answers: slow, not silent (pipeline_silent.go)
	}
	c.mu.Lock()
	c.cur = nil
	if c.err != nil {
		// The connection broke while the answer came in, and the
		// answer is whole: it is its caller's.
		c.mu.Unlock()
		var err error
		if rfq.TxStatus != 'I' {
			err = errPipeTxOpen
		}
		if cur.finish(err) {
			cur.endLease()
		}
		return errPipeClosed
	}
	// Shifted down rather than resliced, so that the slice keeps its
	// array and a lone caller's request costs no allocation here.
	n := copy(c.pending, c.pending[1:])
	c.pending[n] = nil
	c.pending = c.pending[:n]
	if n == len(c.queue) {
		c.noteDrainedLocked()
	}
	if rfq.TxStatus != 'I' {
		gone := c.failLocked(errPipeTxOpen)
		c.mu.Unlock()
		if cur.finish(errPipeTxOpen) {
			gone = append(gone, cur)
		}
		endLeases(gone)
		return errPipeClosed
	}
	c.mu.Unlock()
	c.woke = c.woke || cur.onDone == nil
	if cur.finish(nil) {
		cur.endLease()
	}
	return nil
}

// flushBeforeWait writes out what is queued when the next read would wait
// for the server, having first let the callers answered since the last
// such wait run, so that their next requests go out in the same write.
// Only the reader calls it. A reader whose own answers are the only ones
// it read yields nothing, so that a lone caller pays no trip through the
// scheduler.
func (c *pipeConn) flushBeforeWait() {
	if c.fe.ReadBufferLen() > 0 {
		return // answers already read wait to be handed out
	}
	c.mu.Lock()
	if c.woke {
		c.woke = false
		c.yieldLocked()
	}
	if !c.between {
		// Otherwise readLoop is letting callers run as it stops
		// reading, and writes what they queue when they have run.
		c.flushLocked()
	}
	c.mu.Unlock()
}

// yieldLocked lets the callers the reader has just answered run. What they
// send meanwhile to a server with nothing in hand waits in the queue
// (between, see send), for the yielding goroutine to write out as soon as
// it has c.mu again, in the same hold that ends the wait: so a request
// never waits on a reader that has gone back to the socket. c.mu must be
// held; it is held again on return.
func (c *pipeConn) yieldLocked() {
	c.between = true
	hook := c.yieldHook
	c.mu.Unlock()
	if hook != nil {
		hook()
	} else {
		runtime.Gosched()
	}
	c.mu.Lock()
	c.between = false
}
