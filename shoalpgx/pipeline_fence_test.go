package shoalpgx

import (
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
