package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// ownReadOnly is one way a caller's own statements make the write after
// them fail with SQLSTATE 25006 on a server that takes writes.
type ownReadOnly struct {
	name string
	run  func(ctx context.Context, p *Pool, r refusal) error // returns the refused write's error
}

var ownReadOnlys = []ownReadOnly{
	{"SET TRANSACTION READ ONLY in a pool's Tx", func(ctx context.Context, p *Pool, r refusal) error {
		return writeInReadOnlyTx(ctx, p.Begin, r.table)
	}},
	{"SET TRANSACTION READ ONLY in a Conn's Tx", func(ctx context.Context, p *Pool, r refusal) error {
		c, err := p.Acquire(ctx)
		if err != nil {
			return err
		}
		defer c.Release()
		return writeInReadOnlyTx(ctx, c.Begin, r.table)
	}},
	{"BEGIN READ ONLY through a Conn's Exec", func(ctx context.Context, p *Pool, r refusal) error {
		c, err := p.Acquire(ctx)
		if err != nil {
			return err
		}
		defer c.Release()
		if _, err := c.Exec(ctx, "BEGIN READ ONLY"); err != nil {
			return err
		}
		defer func() { _, _ = c.Exec(ctx, "ROLLBACK") }()
		_, err = c.Exec(ctx, "insert into "+r.table+" values (1)")
		return err
	}},
	{"BEGIN READ ONLY and the write in one Exec on the Pool", func(ctx context.Context, p *Pool, r refusal) error {
		_, err := p.Exec(ctx, "BEGIN READ ONLY; insert into "+r.table+" values (1)")
		return err
	}},
	{"a function that refuses a write, on the Pool", func(ctx context.Context, p *Pool, r refusal) error {
		_, err := p.Exec(ctx, r.sql, 1) // shared with pipelining
		return err
	}},
	// Last: the session stays read-only, as its caller left it.
	{"SET SESSION CHARACTERISTICS READ ONLY on a Conn", func(ctx context.Context, p *Pool, r refusal) error {
		c, err := p.Acquire(ctx)
		if err != nil {
			return err
		}
		defer c.Release()
		if _, err := c.Exec(ctx, "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY"); err != nil {
			return err
		}
		_, err = c.Exec(ctx, "insert into "+r.table+" values (1)")
		return err
	}},
}

// writeInReadOnlyTx begins a transaction with begin, makes it read-only
// after it began and writes into table there, returning the write's error.
func writeInReadOnlyTx(ctx context.Context, begin func(context.Context) (pgx.Tx, error), table string) error {
	tx, err := begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SET TRANSACTION READ ONLY"); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "insert into "+table+" values (1)")
	return err
}

// A write refused with SQLSTATE 25006 because of its caller's own
// statements (a transaction made read-only after it began, a BEGIN READ
// ONLY sent as a statement, a function raising it, a session made
// read-only) leaves a several-host read-write pool as it is: the server,
// asked after the refusal, takes writes, so every connection the pool had
// stays open, whole and shared. Without the look each of these reset the
// pool, closing them all, and until the look read the server's default
// rather than the session's, so did the last. A write a fenced server
// refuses still resets it (TestFailoverReadOnlyResets).
func TestOwnReadOnlyRefusalLeavesThePool(t *testing.T) {
	for _, pipeline := range []int{0, 8} {
		t.Run(fmt.Sprintf("pipeline=%d", pipeline), func(t *testing.T) {
			ctx := pgtest.Ctx(t)
			r := refusingPool(t, pipeline)
			r.pool.refusalRole = nil // the server's real answer
			// Open connections of each kind, to see them survive.
			held := make([]*Conn, 2)
			for i := range held {
				c, err := r.pool.Acquire(ctx)
				if err != nil {
					t.Fatal(err)
				}
				held[i] = c
			}
			for _, c := range held {
				c.Release()
			}
			if pipeline > 0 {
				if _, err := r.pool.Exec(ctx, "select $1::int", 1); err != nil {
					t.Fatal(err)
				}
			}
			whole, shared := wholePIDs(t, r.pool), pipePIDsOf(r.pool)
			for _, own := range ownReadOnlys {
				before := r.pool.resets.Load()
				err := own.run(ctx, r.pool, r)
				var pe *pgconn.PgError
				if !errors.As(err, &pe) || pe.Code != "25006" {
					t.Fatalf("%s: %v, want SQLSTATE 25006", own.name, err)
				}
				settled(t, r.pool)
				if n := r.pool.resets.Load() - before; n != 0 {
					t.Errorf("%s: %d resets, want none: the server takes writes", own.name, n)
				}
			}
			if got := wholePIDs(t, r.pool); !subset(whole, got) {
				t.Errorf("whole connections' backends %v before, %v after: some were closed", whole, got)
			}
			if got := pipePIDsOf(r.pool); !subset(shared, got) {
				t.Errorf("shared connections' backends %v before, %v after: some were closed", shared, got)
			}
			if s := r.pool.Stat(); s.Shoal().Closed != 0 || s.Pipelined().Closed != 0 {
				t.Errorf("%d whole and %d shared connections closed, want none", s.Shoal().Closed, s.Pipelined().Closed)
			}
		})
	}
}

// wholePIDs returns the backend pids of pool's idle whole connections.
func wholePIDs(t *testing.T, pool *Pool) map[uint32]bool {
	t.Helper()
	pids := map[uint32]bool{}
	for _, c := range pool.AcquireAllIdle(pgtest.Ctx(t)) {
		pids[c.Conn().PgConn().PID()] = true
		c.Release()
	}
	if len(pids) == 0 {
		t.Fatal("no idle whole connection")
	}
	return pids
}

// pipePIDsOf is pipePIDs, or none without pipelining.
func pipePIDsOf(pool *Pool) map[uint32]bool {
	if pool.pipe == nil {
		return map[uint32]bool{}
	}
	return pipePIDs(pool)
}

// subset reports whether every key of a is in b.
func subset(a, b map[uint32]bool) bool {
	return !slices.ContainsFunc(slices.Collect(maps.Keys(a)), func(k uint32) bool { return !b[k] })
}
