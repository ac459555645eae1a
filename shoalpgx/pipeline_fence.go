package shoalpgx

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/shoalpool/shoal/internal/ctxwait"
)

// lookForLock is slotLockedElsewhere through one of the shared
// connections, for a pipelined pool, which may have none of its whole ones
// open when it dials: it asks, by a statement pipelined like any other,
// whether another session holds the slot's lock under key. It takes a
// stream only if one is free now, since waiting for one from inside a dial
// could wait for this very dial. For a slot that is not suspect only a
// connection with nothing in flight will do, as only an idle whole one
// does; a suspect slot's look queues behind what is in flight, within
// fenceCheckWait and fenceQueryTimeout together. looked is false when it
// could not look, and the caller looks through a whole connection instead.
func (pp *pipePool) lookForLock(ctx context.Context, key int32, slot int, suspect bool) (locked, looked bool) {
	if !suspect && !pp.anyQuiet() {
		return false, false // not even a lease taken and given back, which Stats would count
	}
	l, err := pp.core.TryAcquireIdle()
	if err != nil {
		return false, false
	}
	if !suspect && l.Value().inFlight() { // a statement came first
		l.Release()
		return false, false
	}
	if !pp.admit(ctx, l) { // ends l when it refuses the connection
		return false, false
	}
	wait := fenceQueryTimeout
	if suspect {
		wait += fenceCheckWait
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	c := l.Value()
	// Literals, not parameters: a simple Query runs without preparing
	// anything on the shared connection. Both are int4s, the key
	// parenthesised so that a negative one is cast, not negated as an oid.
	q := fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM pg_locks
		WHERE locktype = 'advisory' AND classid = (%d)::int4::oid AND objid = (%d)::int4::oid AND objsubid = 2)`, key, int32(slot))
	for deadline := time.Now().Add(fenceGrace); ; {
		r := newPipeReq(1)
		buf, err := (&pgproto3.Query{String: q}).Encode(r.buf)
		if err != nil {
			l.Release()
			return false, false
		}
		r.buf, r.lease = buf, l
		if err := c.send(ctx, nil, r); err != nil {
			l.Discard()
			return false, false
		}
		// wait keeps l once r is answered, for the next poll; when ctx
		// ends first, l ends with r's answer.
		if err := pp.wait(ctx, r); err != nil {
			return false, false
		}
		res := r.result(0)
		if res.err != nil || len(res.rows) != 1 || len(res.rows[0]) != 1 {
			r.endLease()
			return false, false
		}
		locked = string(res.rows[0][0]) == "t"
		if !locked || time.Now().After(deadline) || !ctxwait.Sleep(ctx, fencePoll) {
			r.endLease()
			return locked, true
		}
	}
}

// anyQuiet reports whether a shared connection has nothing in flight now.
func (pp *pipePool) anyQuiet() bool {
	for _, c := range pp.conns() {
		if !c.inFlight() {
			return true
		}
	}
	return false
}

// inFlight reports whether any request is on the connection, queued or at
// the server.
func (c *pipeConn) inFlight() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending) > 0
}
