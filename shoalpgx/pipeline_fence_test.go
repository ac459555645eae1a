package shoalpgx

import (
	"context"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// The fence holds on shared connections as on whole ones: a pipelined
// pool on a budget of slots dials its shared connection with a slot's
// permit, and that connection's backend holds the slot's advisory lock.
func TestPipelineFencesSharedConnectionsWithTheirSlotsLock(t *testing.T) {
	ctx := pgtest.Ctx(t)
	key := fenceKeyFor(t)
	b := newSlotBudget(key, 5, 6, 7, 8)
	p := newPipelinedPool(t, 4, 4, func(c *Config) { c.Budget = b })
	var one int
	if err := p.QueryRow(ctx, "select $1::int", 1).Scan(&one); err != nil || one != 1 {
		t.Fatalf("a pipelined statement on a fenced pool: %d, %v", one, err)
	}
	pids := pipePIDs(p)
	if len(pids) == 0 {
		t.Fatal("no shared connection open after a pipelined statement")
	}
	admin := pgtest.AdminConn(t)
	held := map[uint32][]int32{}
	pgtest.WaitFor(t, 5*time.Second, "each shared connection holding a slot's lock", func() bool {
		rows, err := admin.Query(ctx, `SELECT pid, objid::int8::int4 FROM pg_locks
			WHERE locktype = 'advisory' AND classid = $1::int4::oid AND objsubid = 2 AND granted`, key)
		if err != nil {
			t.Fatal(err)
		}
		clear(held)
		for rows.Next() {
			var pid uint32
			var slot int32
			if err := rows.Scan(&pid, &slot); err != nil {
				t.Fatal(err)
			}
			held[pid] = append(held[pid], slot)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		for pid := range pids {
			if len(held[pid]) != 1 {
				return false
			}
		}
		return true
	})
	for pid := range pids {
		if s := held[pid][0]; s < 5 || s > 8 {
			t.Errorf("shared connection %d holds slot %d's lock, not one of the budget's slots 5-8", pid, s)
		}
	}
}

// A pipelined pool with no whole connection open looks before a dial
// through one of its shared connections: a suspect slot another session
// holds is refused without a connection at the server. Here the shared
// connection is busy with a statement waiting on a lock, so that the next
// statement makes the pool dial with slot 1; the lock is let go once the
// dial has its permit, and the look, queued behind that statement, answers.
func TestPipelineFenceLooksThroughASharedConnection(t *testing.T) {
	pipelineFenceLooksThroughASharedConnection(t, fenceKeyFor(t))
}

// pipelineFenceLooksThroughASharedConnection is
// TestPipelineFenceLooksThroughASharedConnection for a given fence key.
func pipelineFenceLooksThroughASharedConnection(t *testing.T, key int32) {
	ctx := pgtest.Ctx(t)
	s := newFenceScene(t, key, 1)
	b := newSlotBudget(key, 0, 1)
	b.suspect = true
	p := newPipelinedPool(t, 4, 4, s.pool(b, nil))
	if _, err := p.Exec(ctx, "SELECT 1"); err != nil { // dials the shared connection, with slot 0
		t.Fatal(err)
	}
	release := holdPipelined(t, p, s.stale, 1)
	next := make(chan error, 1)
	go func() { _, err := p.Exec(ctx, "SELECT 2"); next <- err }()
	pgtest.WaitFor(t, 10*time.Second, "a dial with slot 1", func() bool { return b.freeSlots() == 0 || b.fenced.Load() > 0 })
	release()
	pgtest.WaitFor(t, 10*time.Second, "slot 1 refused", func() bool { return b.fenced.Load() > 0 })
	if err := <-next; err != nil {
		t.Fatal(err)
	}
	if n := p.core.Stats().TotalConns; n != 0 {
		t.Fatalf("%d whole connections open; the test is of a pool with none", n)
	}
	if n := s.connects.Load(); n != 1 {
		t.Fatalf("%d connects; the refused slot must cost none", n)
	}
}

// A slot that is not suspect is looked at through a shared connection
// with nothing in flight, as through an idle whole one: here the pool's
// first whole connection is dialled with slot 1, which another session
// holds, while the shared connection of slot 0 is idle.
func TestPipelineFenceLooksThroughAnIdleSharedConnection(t *testing.T) {
	ctx := pgtest.Ctx(t)
	s := newFenceScene(t, fenceKeyFor(t), 1)
	b := newSlotBudget(s.key, 0, 1, 2)
	p := newPipelinedPool(t, 4, 4, s.pool(b, nil))
	if _, err := p.Exec(ctx, "SELECT 1"); err != nil { // dials the shared connection, with slot 0
		t.Fatal(err)
	}
	if n := p.core.Stats().TotalConns; n != 0 {
		t.Fatalf("%d whole connections open; the test is of a pool with none", n)
	}
	c, err := p.Acquire(ctx) // slot 1, refused by the look; then slot 2
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	if b.fenced.Load() == 0 {
		t.Fatal("slot 1 was never tried: the test proves nothing")
	}
	if n := s.connects.Load(); n != 2 {
		t.Fatalf("%d connects, want 2 (slots 0 and 2); the refused slot must cost none", n)
	}
}

// A slot that is not suspect is not worth a wait, so its look takes no
// shared connection with a statement in flight, where it would queue
// behind that statement: here the only shared one is busy on a lock while
// the pool's first whole connection is dialled with slot 1, which another
// session holds. The lock refuses it after connecting, and the shared
// pool counts no acquire beside its two statements'.
func TestPipelineFenceDoesNotQueueAPlainSlotsLook(t *testing.T) {
	ctx := pgtest.Ctx(t)
	s := newFenceScene(t, fenceKeyFor(t), 1)
	b := newSlotBudget(s.key, 0, 1)
	p := newPipelinedPool(t, 4, 4, s.pool(b, nil))
	if _, err := p.Exec(ctx, "SELECT 1"); err != nil { // dials the shared connection, with slot 0
		t.Fatal(err)
	}
	release := holdPipelined(t, p, s.stale, 1)
	dialing, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		c, err := p.Acquire(dialing) // slot 1, the only one left, refused until stop
		if err == nil {
			c.Release()
		}
		done <- err
	}()
	pgtest.WaitFor(t, 10*time.Second, "slot 1 refused", func() bool { return b.fenced.Load() > 0 })
	n := p.pipe.core.Stats().Acquires
	stop()
	<-done
	release()
	if n != 2 {
		t.Fatalf("the shared connections' pool counts %d acquires, want 2: a plain slot's look queued behind a statement in flight", n)
	}
}
