package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
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
var ErrSlotFenced = errors.New("shoalpgx: the budget slot is still held at the server by another session")

// fenceCheckWait bounds how long a dial waits to borrow one of its pool's
// own connections to look at the server's locks before it dials.
const fenceCheckWait = 100 * time.Millisecond

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
// refused slot does not cost a connection at the server even for a moment.
// It answers false when it cannot ask (no connection open, none free in
// time): the lock taken after connecting still fences.
func (p *Pool) slotLockedElsewhere(ctx context.Context, key int32, slot int) bool {
	core := p.forDials.Load()
	if core == nil || core.Stats().TotalConns == 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, fenceCheckWait)
	defer cancel()
	lease, err := core.Acquire(ctx)
	if err != nil {
		return false
	}
	var locked bool
	err = lease.Value().conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks
		WHERE locktype = 'advisory' AND classid = $1::int4::oid AND objid = $2::int4::oid AND objsubid = 2)`,
		key, int32(slot)).Scan(&locked)
	if err != nil {
		lease.Discard()
		return false
	}
	lease.Release()
	return locked
}

// takeFence locks the slot for conn's session, or reports that another
// session holds it.
func takeFence(ctx context.Context, conn *pgx.Conn, key int32, slot int) error {
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", key, int32(slot)).Scan(&ok); err != nil {
		return fmt.Errorf("shoalpgx: taking the budget fence for slot %d: %w", slot, err)
	}
	if !ok {
		return fmt.Errorf("%w (slot %d)", ErrSlotFenced, slot)
	}
	return nil
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
// pool holds at most the smaller of n and its share.
func (p *Pool) SetMaxConns(n int32) error {
	if err := p.core.SetMaxConns(int(n)); err != nil {
		return fmt.Errorf("shoalpgx: %w", err)
	}
	return nil
}
