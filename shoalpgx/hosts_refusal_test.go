package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// refusal is a pool that resets on SQLSTATE 25006 as a several-host
// read-write pool does, and two ways to have the server refuse a write
// with 25006, as a fenced primary would: sql, a statement taking one int
// argument, and table, whose rows a trigger refuses (for CopyFrom).
type refusal struct {
	pool  *Pool
	sql   string
	table string
}

// refusingPool opens a pool on the test server named twice (127.0.0.1 and
// localhost), read-write, with pipeline as its Pipeline and no role check,
// and makes the function and the table that refuse writes.
func refusingPool(t *testing.T, pipeline int) refusal {
	t.Helper()
	ctx := pgtest.Ctx(t)
	admin := pgtest.AdminConn(t)
	fn := fmt.Sprintf("refuse_writes_%d", os.Getpid())
	table := fmt.Sprintf("refused_rows_%d", os.Getpid())
	for _, sql := range []string{
		"create or replace function " + fn + "() returns trigger language plpgsql as " +
			"$$ begin raise exception 'refused' using errcode = '25006'; end $$",
		"create or replace function " + fn + "(int) returns int language plpgsql as " +
			"$$ begin raise exception 'refused' using errcode = '25006'; end $$",
		"create table if not exists " + table + " (n int)",
		"create or replace trigger refuse before insert on " + table + " for each row execute function " + fn + "()",
	} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(context.Background(), "drop table if exists "+table)
		_, _ = admin.Exec(context.Background(), "drop function if exists "+fn+"(int), "+fn+"()")
	})
	cfg, err := ParseConfig(pgtest.ConnString(t) + "&target_session_attrs=read-write")
	if err != nil {
		t.Fatal(err)
	}
	cc := cfg.ConnConfig
	cc.Fallbacks = append(cc.Fallbacks, &pgconn.FallbackConfig{Host: "localhost", Port: cc.Port, TLSConfig: cc.TLSConfig})
	cfg.MaxConns, cfg.Pipeline, cfg.RoleCheckPeriod = 4, pipeline, 0
	pool := newPoolFor(t, cfg)
	// The server refuses these writes as a fenced one would, but it is
	// not fenced: the look after the refusal (judgeRefusal) is made to
	// see a read-only server, as it would behind a fence.
	pool.refusalRole = func(r role) role {
		r.readOnly = true
		return r
	}
	return refusal{pool, "select " + fn + "($1)", table}
}

// settled waits until none of pool's connections is acquired: a connection
// given back with a refused write still to judge is judged, in a goroutine
// of its own, before it is back (giveBack).
func settled(t *testing.T, pool *Pool) {
	t.Helper()
	pgtest.WaitFor(t, 5*time.Second, "every connection given back", func() bool { return pool.Stat().AcquiredConns() == 0 })
}

// statementRunner is what runs statements in the pool's API: the Pool, a
// Conn, a Tx.
type statementRunner interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
}

// refusedCall is one way to have a write refused through a statementRunner.
// It returns what to do once the resets are counted (close the batch), so
// that each call is counted on its own, and the call's error.
type refusedCall struct {
	name string
	run  func(ctx context.Context, q statementRunner, r refusal) (after func(), err error)
}

// refusedCalls are every statement method of the pool's API, each given a
// write the server refuses.
var refusedCalls = []refusedCall{
	{"exec", func(ctx context.Context, q statementRunner, r refusal) (func(), error) {
		_, err := q.Exec(ctx, r.sql, 1)
		return nil, err
	}},
	{"query", func(ctx context.Context, q statementRunner, r refusal) (func(), error) {
		rows, err := q.Query(ctx, r.sql, 1)
		if err != nil {
			return nil, err
		}
		rows.Close()
		return nil, rows.Err()
	}},
	{"queryrow", func(ctx context.Context, q statementRunner, r refusal) (func(), error) {
		var n int
		return nil, q.QueryRow(ctx, r.sql, 1).Scan(&n)
	}},
	{"copyfrom", func(ctx context.Context, q statementRunner, r refusal) (func(), error) {
		_, err := q.CopyFrom(ctx, pgx.Identifier{r.table}, []string{"n"}, pgx.CopyFromRows([][]any{{1}}))
		return nil, err
	}},
	{"batch exec", func(ctx context.Context, q statementRunner, r refusal) (func(), error) {
		br := q.SendBatch(ctx, refusedBatch(r))
		_, err := br.Exec()
		return func() { _ = br.Close() }, err // Close hears the error too
	}},
	{"batch query", func(ctx context.Context, q statementRunner, r refusal) (func(), error) {
		br := q.SendBatch(ctx, refusedBatch(r))
		rows, err := br.Query()
		if err == nil {
			rows.Close()
			err = rows.Err()
		}
		return func() { _ = br.Close() }, err
	}},
	{"batch queryrow", func(ctx context.Context, q statementRunner, r refusal) (func(), error) {
		br := q.SendBatch(ctx, refusedBatch(r))
		var n int
		err := br.QueryRow().Scan(&n)
		return func() { _ = br.Close() }, err
	}},
	{"batch close", func(ctx context.Context, q statementRunner, r refusal) (func(), error) {
		return nil, q.SendBatch(ctx, refusedBatch(r)).Close()
	}},
}

func refusedBatch(r refusal) *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue(r.sql, 1)
	return b
}

// runnerOpener opens a statementRunner on a refusal's pool, and returns
// what ends it.
type runnerOpener struct {
	name string
	open func(ctx context.Context, p *Pool) (statementRunner, func(), error)
}

func onPool() runnerOpener {
	return runnerOpener{"pool", func(ctx context.Context, p *Pool) (statementRunner, func(), error) {
		return p, func() {}, nil
	}}
}

func onConn() runnerOpener {
	return runnerOpener{"conn", func(ctx context.Context, p *Pool) (statementRunner, func(), error) {
		c, err := p.Acquire(ctx)
		if err != nil {
			return nil, nil, err
		}
		return c, c.Release, nil
	}}
}

// inTx begins, with opts, a transaction on the pool, or on an acquired
// Conn with onConn set, or a savepoint in a transaction so begun with
// savepoint set.
func inTx(name string, opts pgx.TxOptions, onConn, savepoint bool) runnerOpener {
	return runnerOpener{name, func(ctx context.Context, p *Pool) (statementRunner, func(), error) {
		var tx pgx.Tx
		var err error
		release := func() {}
		if onConn {
			var c *Conn
			if c, err = p.Acquire(ctx); err != nil {
				return nil, nil, err
			}
			release = c.Release
			tx, err = c.BeginTx(ctx, opts)
		} else {
			tx, err = p.BeginTx(ctx, opts)
		}
		if err != nil {
			release()
			return nil, nil, err
		}
		end := func() { _ = tx.Rollback(context.Background()); release() }
		if savepoint {
			inner, err := tx.Begin(ctx)
			if err != nil {
				end()
				return nil, nil, err
			}
			return inner, end, nil
		}
		return tx, end, nil
	}}
}

// countResets runs every refused call on a runner from open, and fails t
// unless each resets the pool want times.
func countResets(t *testing.T, r refusal, open runnerOpener, want uint64) {
	t.Helper()
	ctx := pgtest.Ctx(t)
	for _, c := range refusedCalls {
		q, end, err := open.open(ctx, r.pool)
		if err != nil {
			t.Fatalf("%s: %v", open.name, err)
		}
		before := r.pool.resets.Load()
		after, err := c.run(ctx, q, r)
		if after != nil {
			after()
		}
		end()
		// A refusal inside a transaction, or a batch not yet closed, is
		// judged once the session is free again: counted after the end.
		settled(t, r.pool)
		n := r.pool.resets.Load() - before
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "25006" {
			t.Fatalf("%s %s: %v, want SQLSTATE 25006", open.name, c.name, err)
		}
		if n != want {
			t.Errorf("%s %s: %d resets, want %d", open.name, c.name, n, want)
		}
	}
}

// A statement refused as read-only (SQLSTATE 25006) resets a pool that
// names several hosts and wants a writable one, whichever method of the
// pool's API ran it, on the Pool, a Conn, a transaction or a savepoint;
// with pipelining on and off. The failover around it is
// TestFailoverReadOnlyResets' and TestPipelineFailoverReadOnlyResets';
// here the refusal is refusingPool's, so that each call is checked without
// a failover of its own.
func TestReadOnlyRefusalResetsThePool(t *testing.T) {
	for _, pipeline := range []int{0, 8} {
		t.Run(fmt.Sprintf("pipeline=%d", pipeline), func(t *testing.T) {
			r := refusingPool(t, pipeline)
			for _, open := range []runnerOpener{
				onPool(),
				onConn(),
				inTx("tx", pgx.TxOptions{}, false, false),
				inTx("conn tx", pgx.TxOptions{AccessMode: pgx.ReadWrite}, true, false),
				inTx("savepoint", pgx.TxOptions{}, false, true),
			} {
				countResets(t, r, open, 1)
			}
		})
	}
}

// A write refused inside a transaction its caller began read-only is the
// caller's doing, and leaves the pool as it is, whichever method ran it:
// by AccessMode or a BeginQuery of the caller's own, on the Pool or a
// Conn, and in a savepoint of one.
func TestReadOnlyTransactionsRefusalLeavesThePool(t *testing.T) {
	r := refusingPool(t, 0)
	readOnly := pgx.TxOptions{AccessMode: pgx.ReadOnly}
	for _, open := range []runnerOpener{
		inTx("tx", readOnly, false, false),
		inTx("conn tx", readOnly, true, false),
		inTx("savepoint", readOnly, false, true),
		inTx("begin query", pgx.TxOptions{BeginQuery: "BEGIN  Read\n Only"}, false, false),
	} {
		countResets(t, r, open, 0)
	}
}

// A batch that begins a transaction READ ONLY (pgx.Batch.BeginTx) runs
// its statements in it: their refused writes, and those of the
// transaction it returns, leave the pool as it is; a batch that begins one
// READ WRITE resets it, as any other refused write does.
func TestReadOnlyBatchTransactionRefusal(t *testing.T) {
	ctx := pgtest.Ctx(t)
	r := refusingPool(t, 0)
	for _, c := range []struct {
		mode pgx.TxAccessMode
		want uint64
	}{{pgx.ReadOnly, 0}, {pgx.ReadWrite, 1}} {
		for _, later := range []bool{false, true} {
			b := &pgx.Batch{}
			b.BeginTx(pgx.TxOptions{AccessMode: c.mode})
			if !later {
				b.Queue(r.sql, 1)
			}
			before := r.pool.resets.Load()
			br := r.pool.SendBatch(ctx, b)
			if _, err := br.Exec(); err != nil {
				t.Fatalf("%s: the batch's BEGIN: %v", c.mode, err)
			}
			var err error
			if later {
				if err = br.Close(); err != nil {
					t.Fatalf("%s: %v", c.mode, err)
				}
				_, err = br.Tx().Exec(ctx, r.sql, 1)
			} else {
				_, err = br.Exec()
				_ = br.Close()
			}
			_ = br.Tx().Rollback(ctx)
			settled(t, r.pool)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "25006" {
				t.Fatalf("%s (in its Tx: %v): %v, want SQLSTATE 25006", c.mode, later, err)
			}
			if n := r.pool.resets.Load() - before; n != c.want {
				t.Errorf("%s (in its Tx: %v): %d resets, want %d", c.mode, later, n, c.want)
			}
		}
	}
}

// Once a refused write has reset the pool, the refusals on connections
// dialled before that reset reset nothing more: those connections are
// retired already, and each further reset would close the ones dialled
// since, on the new primary. A connection dialled after it resets again.
func TestRefusalsOnRetiredConnectionsResetOnce(t *testing.T) {
	ctx := pgtest.Ctx(t)
	r := refusingPool(t, 0)
	refuse := func(c *Conn) {
		t.Helper()
		var pe *pgconn.PgError
		if _, err := c.Exec(ctx, r.sql, 1); !errors.As(err, &pe) || pe.Code != "25006" {
			t.Fatalf("%v, want SQLSTATE 25006", err)
		}
	}
	acquire := func() *Conn {
		t.Helper()
		c, err := r.pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Release) // before the pool closes, should the test fail holding it
		return c
	}
	c1, c2 := acquire(), acquire()
	refuse(c1)
	refuse(c2)
	if n := r.pool.resets.Load(); n != 1 {
		t.Fatalf("two refusals on connections of before the reset: %d resets, want 1", n)
	}
	c1.Release()
	c2.Release()
	refuse(acquire())
	if n := r.pool.resets.Load(); n != 2 {
		t.Fatalf("a refusal on a connection dialled after the reset: %d resets in all, want 2", n)
	}
}
