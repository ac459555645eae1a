package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/ctxwait"
)

// The fence: with a Budget that names itself (FenceKey), every connection
// takes a session advisory lock on (the budget's key, its permit's slot)
// before the pool hands it out, and keeps it for its life. A lease-based
// budget can hand a slot out twice while a process is paused past its
// lease with its connections still open; the server itself then refuses
// the second holder, because the lock dies only with the first holder's
// backend. See the package doc for what the fence costs and what breaks it.

// fenceKeyer is a Budget that can be fenced at the server: FenceKey is the
// first key of its slots' advisory locks, the same in every process that
// shares the budget.
type fenceKeyer interface{ FenceKey() int32 }

// fencedPermit is a permit whose budget wants to hear that the server
// refused its slot, so that it hands out another one.
type fencedPermit interface{ Fenced() }

// ErrSlotFenced is the error of a dial whose budget slot is still locked at
// the server by another session: a process that shares the budget held
// that slot, was paused past its lease, and its connection is still open.
// The dial's connection is closed; the pool dials again with another slot.
// Its text names the lock and how pg_locks shows it, to find the holder.
// It wraps shoal.ErrPermitRefused: the server answered, so the refusal
// never makes the pool count its server as down.
var ErrSlotFenced error = slotFenced{}

// slotFenced is ErrSlotFenced's type, for its Unwrap.
type slotFenced struct{}

func (slotFenced) Error() string {
	return "shoalpgx: the budget slot is still held at the server by another session"
}
func (slotFenced) Unwrap() error { return shoal.ErrPermitRefused }

// suspectPermit is a permit that knows whether its slot may still be held
// at the server by a process that lost its lease (shoaletcd's does).
type suspectPermit interface{ Suspect() bool }

const (
	// fenceCheckWait bounds how long a dial with a suspect slot waits to
	// borrow one of its pool's own connections to look at the server's
	// locks before it dials. The borrow queues with the callers, so on a
	// busy pool it waits about as long as they do, and the bound is
	// generous because a look that gives up connects: the server then
	// counts one connection above the budget until the lock refuses it.
	fenceCheckWait = time.Second
	// fenceQueryTimeout bounds the look itself, apart from the borrow: with
	// one deadline for both, the query was often left no time, and pgx
	// closes a connection whose query is cut short.
	fenceQueryTimeout = 2 * time.Second
	// fenceGrace is how long a slot's lock may stay held after the
	// connection that held it closed: the server ends a backend a moment
	// after its client hangs up, and the lock goes with it. A lock held
	// longer belongs to a live session.
	fenceGrace = 100 * time.Millisecond
	fencePoll  = 5 * time.Millisecond
)

// fenceKey returns the budget's fence key, and false when the pool has no
// budget or its budget cannot be fenced.
func (p *Pool) fenceKey() (int32, bool) {
	f, ok := p.config.Budget.(fenceKeyer)
	if !ok {
		return 0, false
	}
	return f.FenceKey(), true
}

// slotLockedElsewhere looks, before a dial, whether another session holds
// the slot's lock, through a connection the pool already has, so that a
// refused slot costs no connection at the server even for a moment. Only a
// suspect slot is worth a wait for a connection to look through: any other
// is looked at only when a connection is idle now, since a borrowed one
// counts as a caller waiting in the pool's demand. It answers false when it
// cannot look: the lock taken after connecting still fences. A pipelined
// pool looks through a shared connection first (lookForLock), since it may
// have no whole one open.
func (p *Pool) slotLockedElsewhere(ctx context.Context, permit shoal.BudgetPermit, key int32) bool {
	core := p.ready.Load()
	if core == nil {
		return false // a dial New started, before the pool was whole
	}
	s, ok := permit.(suspectPermit)
	suspect := ok && s.Suspect()
	// sharedCore is set once p.pipe is: a dial may run while New makes it.
	if p.sharedCore.Load() != nil {
		if locked, looked := p.pipe.lookForLock(ctx, key, permit.Slot(), suspect); looked {
			return locked
		}
	}
	var lease shoal.Lease[*pooledConn]
	var err error
	borrowCtx := ctx
	if suspect {
		if core.Stats().TotalConns == 0 {
			return false
		}
		var cancel context.CancelFunc
		borrowCtx, cancel = context.WithTimeout(ctx, fenceCheckWait)
		defer cancel()
		lease, err = core.Acquire(borrowCtx)
	} else {
		// Never TryAcquire, which dials when none is idle: a shared
		// connection's dial would make the whole pool dial one more.
		lease, err = core.TryAcquireIdle()
	}
	if err != nil {
		return false
	}
	// The look is a query on a session like any caller's: it is pinged
	// when due, and PrepareConn (which may refuse a standby, say) vouches
	// for it. Neither tracer hears of the borrow, which is the pool's own.
	pc := lease.Value()
	pc.lease = lease
	if ok, _ := p.admit(borrowCtx, pc); !ok {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, fenceQueryTimeout)
	defer cancel()
	conn := pc.conn
	for deadline := time.Now().Add(fenceGrace); ; {
		var locked bool
		err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks
			WHERE locktype = 'advisory' AND classid = $1::int4::oid AND objid = $2::int4::oid AND objsubid = 2)`,
			key, int32(permit.Slot())).Scan(&locked)
		if err != nil {
			// Only a connection the error broke is closed: a query refused
			// before it was sent leaves the connection as good as it was.
			pc.releaseUnused() // closes it if the error left it unusable
			return false
		}
		if !locked || time.Now().After(deadline) || !ctxwait.Sleep(ctx, fencePoll) {
			pc.releaseUnused()
			return locked
		}
	}
}

// takeFence locks the slot for conn's session, or reports that another
// session holds it past fenceGrace.
func takeFence(ctx context.Context, conn *pgx.Conn, key int32, slot int) error {
	for deadline := time.Now().Add(fenceGrace); ; {
		var ok bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", key, int32(slot)).Scan(&ok); err != nil {
			return fmt.Errorf("shoalpgx: taking the budget fence for slot %d: %w", slot, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) || !ctxwait.Sleep(ctx, fencePoll) {
			return slotFencedErr(key, slot)
		}
	}
}

// slotFencedErr is ErrSlotFenced for slot under the budget's fence key,
// with what finds the session holding it in pg_locks, where a lock on two
// int4s shows its first as classid (an oid, so a negative key wraps) and
// its second as objid, with objsubid 2.
func slotFencedErr(key int32, slot int) error {
	return fmt.Errorf("%w (slot %d: pg_advisory_lock(%d, %d); pg_locks: locktype 'advisory', classid %d, objid %d, objsubid 2)",
		ErrSlotFenced, slot, key, slot, uint32(key), uint32(slot))
}

// refuseSlot tells the permit's budget that the server refused its slot.
func refuseSlot(permit shoal.BudgetPermit) {
	if f, ok := permit.(fencedPermit); ok {
		f.Fenced()
	}
}

// SetMaxConns changes the most connections the pool opens at once while it
// runs (see shoal.Pool.SetMaxConns): growing serves waiting callers with new
// connections at once; shrinking closes idle connections now and acquired
// ones as they are released, and never fails an Acquire. With a Budget the
// pool holds at most the smaller of n and its share. With Pipeline, n is
// split between the whole and the shared connections (see the package
// doc, "Pipelining"). The read pool (Reads) follows when ReadMaxConns
// leaves it the pool's MaxConns. Calls racing each other leave the pool,
// each kind of connection's half with Pipeline, and the read pool all at
// the n of the one that takes effect last (not necessarily the last to
// return): once they have returned, every Stat reports that limit.
func (p *Pool) SetMaxConns(n int32) error {
	// One call at a time resizes every part, so that no call's resize of
	// one part lands between another's resizes of two.
	p.maxMu.Lock()
	defer p.maxMu.Unlock()
	if p.pipe != nil {
		if err := p.pipe.setMaxConns(n); err != nil {
			return err
		}
	} else if err := p.core.SetMaxConns(int(n)); err != nil {
		return fmt.Errorf("shoalpgx: %w", err)
	}
	p.followReads(n)
	return nil
}

// terminate is the protocol's Terminate message: 'X' and its length.
var terminate = []byte{'X', 0, 0, 0, 4}

// closeAndWait closes a pool's connection and returns only once the
// server has ended its backend, which is when a budgeted pool gives the
// connection's permit back (and any pool its place under MaxConns,
// within cleanupHold). pgx's Close sends Terminate and hangs up at once,
// and the backend lingers for a moment after, longer on a busy
// machine, holding its place in pg_stat_activity and its fence lock;
// another process given the permit in that moment would make the server
// count one above the budget. The server closes the socket only
// as the backend exits, so reading to EOF after Terminate waits exactly
// that long (closeTimeout at most).
func closeAndWait(pc *pooledConn) error {
	pc.openGate()
	return closeWaiting(pc.conn)
}

// closeWaiting is closeAndWait for a connection the pool has not taken yet:
// a dial that refuses its new connection (AfterConnect failed, the fence
// or pipelining refused it) gives its permit back as it returns, so the
// backend must be gone by then too.
func closeWaiting(conn *pgx.Conn) error {
	hc, err := conn.PgConn().Hijack()
	if err != nil {
		return closePgx(conn) // busy or closed already: nothing to wait on
	}
	nc := hc.Conn
	defer nc.Close()
	if err := nc.SetDeadline(time.Now().Add(closeTimeout)); err != nil {
		return err
	}
	if _, err := nc.Write(terminate); err != nil {
		return nil // the connection is gone already
	}
	_, err = io.Copy(io.Discard, nc)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("shoalpgx: the server did not end the session within %s of Terminate", closeTimeout)
		}
	}
	return nil
}

// fenceLock is the advisory lock a fenced connection holds: its budget's
// key and its permit's slot.
type fenceLock struct {
	key  int32
	slot int
}

// unfence lets go of pc's fence lock, if it holds one, before the
// connection leaves the pool with its permit given back (Hijack). If the
// unlock fails the lock stays until the session ends, and the fence
// refuses the slot to others meanwhile, as for a paused process: never
// unsafe, only wasteful.
func (pc *pooledConn) unfence() {
	f := pc.fence
	if f == nil {
		return
	}
	pc.fence = nil
	ctx, cancel := context.WithTimeout(context.Background(), fenceQueryTimeout)
	defer cancel()
	_, _ = pc.conn.Exec(ctx, "SELECT pg_advisory_unlock($1, $2)", f.key, int32(f.slot))
}
