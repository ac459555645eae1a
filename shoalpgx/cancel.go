package shoalpgx

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
)

// What happens when a statement's context ends while the statement runs.
// pgx's default closes the connection (it cannot know where the protocol
// stands), and the pool then dials a new one. ParseConfig installs
// buildCanceler instead: the server is asked to cancel the statement, the
// caller gets the server's answer (SQLSTATE 57014) as soon as it comes, and
// the connection stays.
//
// The race a cancel request brings: PostgreSQL carries it out on a
// connection of its own, and a request still on its way when the next
// statement starts would cancel that one. pgx's own cancelling handler
// sleeps 100ms after every request for that reason, on the caller's
// goroutine. Here the rule is exact. The server closes a cancel
// request's connection only after it has signalled the backend (the
// process serving the request sends the signal, then exits), and a backend
// drops a signal that reaches it while it waits for the client's next
// message (postgres.c: a query cancel is a no-op when no query is in
// progress). So once the server has closed every cancel request's
// connection and the cancelled statement's ReadyForQuery has been read, no
// cancel can reach a later statement. Until then the connection is held
// back: the pool keeps it out of its idle set (counting against MaxConns),
// and a holder's next statement waits in the connection's Write
// (cancelGate). A request the server did not acknowledge may still land at
// any time, and its connection is closed instead.

// cancelRetry is how long a statement may run on after a cancel request the
// server acknowledged before another is sent: a request that reaches the
// backend before the statement does is dropped, as a signal on an idle
// backend is.
const cancelRetry = 100 * time.Millisecond

// errCancelUnacknowledged is the error of a statement on a connection whose
// cancel request the server never acknowledged: that request may still
// cancel whatever the connection runs next, so nothing more runs on it.
var errCancelUnacknowledged = errors.New("shoalpgx: the server did not acknowledge a cancel request on this connection, which could still cancel its next statement; the connection is closed")

// buildCanceler is what ParseConfig installs as the ConnConfig's
// BuildContextWatcherHandler. On a connection the pool dialled it finds the
// cancelGate under the connection (gateConnConfig) and links up with it.
// Elsewhere (a ConnConfig from ParseConfig used with pgx.ConnectConfig)
// there is no gate to hold a later statement back until a cancel request
// can no longer land, and the canceler does what pgx's default handler
// does: it cuts the connection off at once.
func buildCanceler(pg *pgconn.PgConn) ctxwatch.Handler {
	c := &canceler{pg: pg}
	if g := findGate(pg.Conn()); g != nil {
		c.timeout, c.gate = g.timeout, g
		g.c = c
	}
	return c
}

// canceler is a connection's ctxwatch.Handler: pgx calls HandleCancel when
// the context of the operation running on the connection ends, and
// HandleUnwatchAfterCancel when that operation has returned.
type canceler struct {
	pg      *pgconn.PgConn
	timeout time.Duration // Config.CancelTimeout; 0 outside the pool
	gate    *cancelGate   // nil outside the pool

	// pending is true while a request is in flight or one went
	// unacknowledged: the gate's fast path reads it, without the lock.
	pending atomic.Bool
	// ping is true while the pool's own code pings the connection
	// (pooledConn.ping): a ping is a check that the connection answers in
	// time, and one whose context ends is cut off at once, as pgx's
	// default handler does, not cancelled and waited for.
	ping atomic.Bool
	// cut is set by HandleCancel before it looks at busy, and stays set
	// while the operation whose context ended had not written anything when
	// it did, and was cut off at once: the gate's fast path reads it, and
	// turns a write that comes after all into a cancellation
	// (writeAfterCut).
	cut atomic.Bool
	// afterCut, when a test sets it, runs in HandleCancel between its store
	// of cut and its look at busy.
	afterCut func()

	mu       sync.Mutex
	current  *cancelRound // the cancellation under way; nil when none
	inFlight int          // requests sent and not yet acknowledged or given up on
	// unsafe is set when a request went unacknowledged: it may land at
	// any time, so the connection runs no other statement (the gate
	// refuses it, park closes the connection).
	unsafe  atomic.Bool
	settled chan struct{} // closed when inFlight drops to 0; nil while it is 0
	parked  func(ok bool) // set by park: what to do with the connection once settled
}

// cancelRound is one statement's cancellation, from HandleCancel to its
// HandleUnwatchAfterCancel.
type cancelRound struct {
	deadline time.Time     // the fallback: past it the connection is cut off
	answered chan struct{} // closed when the statement has returned
}

// HandleCancel asks the server to cancel the running statement, and sets a
// deadline on the connection, CancelTimeout away, as the last resort: a
// server that answers neither the request nor the statement by then has
// its connection closed by pgx, and the caller gets a timeout.
//
// When nothing has been written since the server's last ReadyForQuery
// (WaitForNotification waits for the server without writing; a statement
// may be about to write), there is nothing to cancel yet: the connection is
// cut off at once, as pgx's default handler does, so that a wait for a
// notification returns at its deadline on a connection pgx keeps; a
// statement that writes after all is cancelled once written
// (writeAfterCut). With a CancelTimeout of 0, outside the pool, and for a
// ping, it only cuts the connection off, as pgx's default handler does.
func (c *canceler) HandleCancel(context.Context) {
	if c.timeout <= 0 || c.ping.Load() {
		_ = c.pg.Conn().SetDeadline(time.Now())
		return
	}
	// The gate's Write stores busy, then loads cut; this stores cut, then
	// loads busy: of two such pairs at least one load sees the other's
	// store, so a statement is either seen written here or its write is
	// turned into a cancellation. Were busy loaded first, a statement could
	// be written between the two, then cut off, and never cancelled.
	c.cut.Store(true)
	if c.afterCut != nil {
		c.afterCut()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.cut.Load():
		// The write saw the cut first: writeAfterCut has set up the
		// round that cancels the statement once written.
	case c.gate.busy.Load():
		c.cut.Store(false) // a write that saw it finds the round under way
		go c.cancelUntilAnswered(c.newRound())
	default:
		_ = c.pg.Conn().SetDeadline(time.Now())
	}
}

// newRound starts a cancellation: its fallback deadline is set on the
// connection. The caller holds c.mu.
func (c *canceler) newRound() *cancelRound {
	r := &cancelRound{deadline: time.Now().Add(c.timeout), answered: make(chan struct{})}
	_ = c.pg.Conn().SetDeadline(r.deadline)
	c.current = r
	return r
}

// writeAfterCut turns the cut-off of an operation that writes after all
// (its context ended between its start and its first write) into a
// cancellation: the deadline moves to CancelTimeout away, and the round it
// returns, if any, is to be started once the write is done, so that the
// request finds the statement at the server.
func (c *canceler) writeAfterCut() *cancelRound {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.cut.Load() {
		return nil
	}
	c.cut.Store(false)
	return c.newRound()
}

// HandleUnwatchAfterCancel runs when the cancelled operation has returned,
// with the server's answer or an error: no more requests are sent for it,
// and the deadline is lifted. It returns at once: requests still in flight
// hold back the connection's next statement (cancelGate) and its return to
// the pool (park), not this caller.
func (c *canceler) HandleUnwatchAfterCancel() {
	c.mu.Lock()
	c.cut.Store(false)
	if r := c.current; r != nil {
		close(r.answered)
		c.current = nil
	}
	c.mu.Unlock()
	_ = c.pg.Conn().SetDeadline(time.Time{})
}

// cancelUntilAnswered sends cancel requests for round r until its statement
// returns: one at once, and another every cancelRetry while the statement
// runs on after one was acknowledged, until r's deadline.
func (c *canceler) cancelUntilAnswered(r *cancelRound) {
	for {
		c.mu.Lock()
		select {
		case <-r.answered:
			// The statement returned before this request was sent: no
			// request, nothing to hold the connection back for.
			c.mu.Unlock()
			return
		default:
		}
		if !time.Now().Before(r.deadline) {
			// The fallback has cut the connection off: a request now
			// could only go unanswered.
			c.mu.Unlock()
			return
		}
		c.inFlight++
		if c.settled == nil {
			c.settled = make(chan struct{})
		}
		c.pending.Store(true)
		c.mu.Unlock()

		acked := c.send(r.deadline)
		c.settle(acked)
		if !acked {
			return
		}
		t := time.NewTimer(cancelRetry)
		select {
		case <-r.answered:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// send sends one cancel request and reports whether the server
// acknowledged it, by closing the request's connection before deadline, or
// whether it never reached the server (its dial failed). Anything else (a
// failed write, no answer in time) leaves a request that may still land.
func (c *canceler) send(deadline time.Time) bool {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	err := c.pg.CancelRequest(ctx)
	if err == nil {
		// pgconn reads until the server closes the connection, or until
		// ctx's deadline cuts the read short: only the first is an answer.
		return ctx.Err() == nil
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// settle records the end of one request, and once none is in flight opens
// the gate and hands a parked connection on.
func (c *canceler) settle(acked bool) {
	c.mu.Lock()
	c.inFlight--
	if !acked {
		c.unsafe.Store(true)
	}
	var parked func(bool)
	if c.inFlight == 0 {
		close(c.settled)
		c.settled = nil
		parked, c.parked = c.parked, nil
		c.pending.Store(c.unsafe.Load())
	}
	ok := !c.unsafe.Load()
	c.mu.Unlock()
	if parked != nil {
		parked(ok)
	}
}

// The answers of park.
const (
	cancelClear  = iota // no request in flight, none unacknowledged: reuse the connection
	cancelUnsafe        // a request went unacknowledged: close the connection
	cancelParked        // requests are in flight: then is called when they settle
)

// park tells what may be done with the connection now that its holder gave
// it back: reuse it, close it, or wait, in which case then is called with
// the verdict (true: reuse) by the goroutine whose request settled last.
func (c *canceler) park(then func(ok bool)) int {
	if !c.pending.Load() {
		return cancelClear
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.inFlight > 0:
		c.parked = then
		return cancelParked
	case c.unsafe.Load():
		return cancelUnsafe
	}
	return cancelClear
}

// wait blocks until no cancel request is in flight: each is given up on
// at its round's deadline at the latest.
func (c *canceler) wait() {
	for {
		c.mu.Lock()
		settled := c.settled
		c.mu.Unlock()
		if settled == nil {
			return
		}
		<-settled
	}
}

// ping pings pc with a round trip. Should ctx end first, pgx closes the
// connection, as it does by default: a ping checks that the connection
// answers in time (Config.PingTimeout bounds it), and a late answer is no
// answer, while a cancel would have it wait for one.
func (pc *pooledConn) ping(ctx context.Context) error {
	if c := pc.cancel; c != nil {
		c.ping.Store(true)
		defer c.ping.Store(false)
	}
	return pc.conn.Ping(ctx)
}
