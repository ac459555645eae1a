package stdlib_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/shoalpgx"
	"github.com/shoalpool/shoal/shoalpgx/stdlib"
)

// One pool serves both APIs under one MaxConns: a database/sql query runs
// while a pgx lease is held, the pool counts the DB's connection with the
// pgx one, and when both are held a third caller of either API waits.
func TestOpenDBFromPoolSharesThePoolWithPgx(t *testing.T) {
	p := newTestPool(t, func(c *shoalpgx.Config) { c.MaxConns = 2 })
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)

	held, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "select $1::int + 1", 41).Scan(&n); err != nil || n != 42 {
		t.Fatalf("database/sql query while a pgx lease is held: %d, %v", n, err)
	}
	if s := p.Stat().Shoal(); s.InUseConns != 1 || s.TotalConns != 2 {
		t.Fatalf("after the database/sql query: %d in use, %d open; want 1 (the pgx lease) and 2", s.InUseConns, s.TotalConns)
	}

	sc, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Stat().Shoal(); s.InUseConns != 2 {
		t.Fatalf("with a pgx lease and a sql.Conn held the pool has %d connections in use, want 2", s.InUseConns)
	}
	if s := db.Stats(); s.InUse != 1 || s.OpenConnections != 1 {
		t.Fatalf("db.Stats: %d in use, %d open; want 1 and 1", s.InUse, s.OpenConnections)
	}

	// The pool is full: a third caller waits, through either API.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := db.QueryRowContext(short, "select 1").Scan(&n); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("database/sql query on a full pool: %v, want context.DeadlineExceeded", err)
	}
	if _, err := p.Acquire(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("pgx acquire on a full pool: %v, want context.DeadlineExceeded", err)
	}

	held.Release()
	if err := db.QueryRowContext(ctx, "select 2").Scan(&n); err != nil || n != 2 {
		t.Fatalf("database/sql query once the pgx lease was released: %d, %v", n, err)
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stat().Shoal(); s.InUseConns != 0 || s.IdleConns != 2 {
		t.Fatalf("all released: %d in use, %d idle; want 0 and 2", s.InUseConns, s.IdleConns)
	}
	if s := db.Stats(); s.OpenConnections != 0 || s.Idle != 0 {
		t.Fatalf("database/sql keeps %d connections (%d idle), want none: MaxIdleConns is 0", s.OpenConnections, s.Idle)
	}
}

// Closing the DB leaves the pool open, and a new DB on it works.
func TestOpenDBFromPoolCloseLeavesThePoolOpen(t *testing.T) {
	p := newTestPool(t, func(c *shoalpgx.Config) { c.MaxConns = 2 })
	ctx := pgtest.Ctx(t)
	db := stdlib.OpenDBFromPool(p)
	if err := db.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.PingContext(ctx); err == nil {
		t.Fatal("ping on a closed DB succeeded")
	}
	if err := p.Ping(ctx); err != nil {
		t.Fatalf("the pool after its DB closed: %v", err)
	}
	var n int
	if err := newTestDB(t, p).QueryRowContext(ctx, "select 3").Scan(&n); err != nil || n != 3 {
		t.Fatalf("a second DB on the pool: %d, %v", n, err)
	}
}

// The connector opens nothing by name, and OpenDBFromPool refuses a nil
// pool.
func TestOpenDBFromPoolDriverAndNilPool(t *testing.T) {
	p := newTestPool(t, nil)
	db := newTestDB(t, p)
	if _, err := db.Driver().Open("postgres://somewhere"); err == nil || !strings.Contains(err.Error(), "stdlib.OpenDBFromPool") {
		t.Fatalf("Driver().Open: %v, want an error naming stdlib.OpenDBFromPool", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "nil *shoalpgx.Pool") {
			t.Fatalf("stdlib.OpenDBFromPool(nil) recovered %v, want a panic naming the nil *shoalpgx.Pool", r)
		}
	}()
	stdlib.OpenDBFromPool(nil)
}

// sql.Conn.Raw hands the callback a *stdlib.Conn whose Conn is the very pgx
// connection the sql.Conn runs on, usable for what only pgx has (CopyFrom).
func TestOpenDBFromPoolRawReachesThePgxConn(t *testing.T) {
	p := newTestPool(t, nil)
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)
	sc := newTestSQLConn(t, db)
	pid := sqlBackendPID(t, sc)
	if _, err := sc.ExecContext(ctx, "create temporary table raw_copy (x int)"); err != nil {
		t.Fatal(err)
	}
	err := sc.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			t.Fatalf("Raw callback got a %T, want *stdlib.Conn", driverConn)
		}
		if got := c.Conn().PgConn().PID(); got != pid {
			t.Fatalf("Raw's pgx connection is backend %d, the sql.Conn's is %d", got, pid)
		}
		_, err := c.Conn().CopyFrom(ctx, pgx.Identifier{"raw_copy"}, []string{"x"}, pgx.CopyFromRows([][]any{{1}, {2}, {3}}))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var sum int
	if err := sc.QueryRowContext(ctx, "select sum(x) from raw_copy").Scan(&sum); err != nil || sum != 6 {
		t.Fatalf("rows copied through Raw: sum %d, %v; want 6", sum, err)
	}
}

// Exec reports rows affected, runs several statements at once when it has
// no arguments (as migration tools send them), and says why LastInsertId
// cannot work.
func TestSQLExec(t *testing.T) {
	p := newTestPool(t, nil)
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)
	sc := newTestSQLConn(t, db)
	if _, err := sc.ExecContext(ctx, "create temporary table exec_t (id int); insert into exec_t values (1), (2), (3)"); err != nil {
		t.Fatalf("several statements in one Exec: %v", err)
	}
	res, err := sc.ExecContext(ctx, "update exec_t set id = id * 10 where id >= $1", 2)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 2 {
		t.Fatalf("RowsAffected = %d, %v; want 2", n, err)
	}
	if _, err := res.LastInsertId(); err == nil || !strings.Contains(err.Error(), "RETURNING") {
		t.Fatalf("LastInsertId: %v, want an error pointing to RETURNING", err)
	}
	var sum int
	if err := sc.QueryRowContext(ctx, "select sum(id) from exec_t").Scan(&sum); err != nil || sum != 51 {
		t.Fatalf("sum %d, %v; want 51", sum, err)
	}
}

// Arguments reach pgx as they are: pgx.NamedArgs rewrites @names, a pgx
// query mode applies; sql.Named and sql.Out are refused with a reason.
func TestSQLArguments(t *testing.T) {
	p := newTestPool(t, nil)
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)
	var s string
	if err := db.QueryRowContext(ctx, "select @a::text || @b::text", pgx.NamedArgs{"a": "x", "b": "y"}).Scan(&s); err != nil || s != "xy" {
		t.Fatalf("pgx.NamedArgs: %q, %v", s, err)
	}
	if err := db.QueryRowContext(ctx, "select $1::text", pgx.QueryExecModeSimpleProtocol, "simple").Scan(&s); err != nil || s != "simple" {
		t.Fatalf("pgx.QueryExecModeSimpleProtocol: %q, %v", s, err)
	}
	if err := db.QueryRowContext(ctx, "select $1::int", sql.Named("n", 1)).Scan(&s); err == nil || !strings.Contains(err.Error(), `named "n"`) {
		t.Fatalf("sql.Named: %v, want an error naming the argument", err)
	}
	var out int
	if _, err := db.ExecContext(ctx, "select $1::int", sql.Out{Dest: &out}); err == nil || !strings.Contains(err.Error(), "sql.Out") {
		t.Fatalf("sql.Out: %v, want an error naming sql.Out", err)
	}
	if err := db.QueryRowContext(ctx, "select nosuchcolumn").Scan(&s); err == nil || !strings.Contains(err.Error(), "nosuchcolumn") {
		t.Fatalf("a query the server refuses: %v, want the server's error", err)
	}
}

// The columns of a result without rows are known, also in the simple
// protocol, where they come with the first row or the end of the result.
func TestSQLColumnsOfAnEmptyResult(t *testing.T) {
	p := newTestPool(t, nil)
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)
	for _, opts := range [][]any{nil, {pgx.QueryExecModeSimpleProtocol}} {
		rows, err := db.QueryContext(ctx, "select 1 as a, 'x' as b where false", opts...)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := rows.Columns()
		if err != nil || len(cols) != 2 || cols[0] != "a" || cols[1] != "b" {
			t.Fatalf("%v: columns %q, %v; want [a b]", opts, cols, err)
		}
		if rows.Next() {
			t.Fatalf("%v: a row where there is none", opts)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// Rows closed before their end, or ended by an error from the server
// midway, leave the connection idle and outside any transaction: it goes
// back to the pool and is reused, not replaced.
func TestSQLRowsClosedEarlyOrFailedKeepTheConnection(t *testing.T) {
	p := newTestPool(t, func(c *shoalpgx.Config) { c.MaxConns = 1 })
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)

	rows, err := db.QueryContext(ctx, "select generate_series(1, 10000)")
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}

	rows, err = db.QueryContext(ctx, "select 10 / (3 - x) from generate_series(1, 5) x")
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		got = append(got, n)
	}
	var pgErr *pgconn.PgError
	if err := rows.Err(); !errors.As(err, &pgErr) || pgErr.Code != "22012" {
		t.Fatalf("rows ended by %v after %v, want division_by_zero (22012)", err, got)
	}
	rows.Close()

	var n int
	if err := db.QueryRowContext(ctx, "select 1").Scan(&n); err != nil || n != 1 {
		t.Fatalf("next query: %d, %v", n, err)
	}
	if s := p.Stat().Shoal(); s.Dials != 1 || s.Closed != 0 {
		t.Fatalf("stats %+v: want the one connection kept throughout", s)
	}
}

// Callers of both APIs at once share a small pool: every operation
// succeeds (each waits its turn for a connection), no connection is closed
// on the way (database/sql gives back every healthy one), and none is left
// out.
func TestOpenDBFromPoolAndPgxConcurrently(t *testing.T) {
	p := newTestPool(t, func(c *shoalpgx.Config) { c.MaxConns = 2 })
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)
	const workers, ops = 8, 40
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			errs <- func() error {
				for i := range ops {
					want := w*ops + i
					var got int
					var err error
					switch i % 4 {
					case 0:
						err = db.QueryRowContext(ctx, "select $1::int", want).Scan(&got)
					case 1:
						err = p.QueryRow(ctx, "select $1::int", want).Scan(&got)
					case 2:
						var tx *sql.Tx
						if tx, err = db.BeginTx(ctx, nil); err == nil {
							err = tx.QueryRowContext(ctx, "select $1::int", want).Scan(&got)
							err = errors.Join(err, tx.Commit())
						}
					case 3:
						var tx pgx.Tx
						if tx, err = p.Begin(ctx); err == nil {
							err = tx.QueryRow(ctx, "select $1::int", want).Scan(&got)
							err = errors.Join(err, tx.Commit(ctx))
						}
					}
					if err != nil {
						return err
					}
					if got != want {
						return errors.New("a query answered another's argument")
					}
				}
				return nil
			}()
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if s := p.Stat().Shoal(); s.Closed != 0 || s.InUseConns != 0 || s.Acquires < workers*ops {
		t.Fatalf("stats %+v: want %d acquires or more, nothing closed, nothing in use", s, workers*ops)
	}
}

// database/sql never shares a connection: on a pool that pipelines, its
// queries, in a transaction or not, take whole connections.
func TestOpenDBFromPoolOfAPipelinedPoolTakesWholeConnections(t *testing.T) {
	p := newTestPool(t, func(c *shoalpgx.Config) { c.MaxConns = 4; c.Pipeline = 8 })
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)
	var n int
	if err := p.QueryRow(ctx, "select $1::int", 1).Scan(&n); err != nil {
		t.Fatal(err)
	}
	shared, all := p.Stat().Pipelined().Acquires, p.Stat().AcquireCount()
	if shared == 0 {
		t.Fatal("the pool's own statement did not share a connection: the pool does not pipeline")
	}
	if err := db.QueryRowContext(ctx, "select $1::int + 1", 41).Scan(&n); err != nil || n != 42 {
		t.Fatalf("database/sql query: %d, %v", n, err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := p.Stat().Pipelined().Acquires; got != shared {
		t.Errorf("database/sql made %d acquires of a shared connection, want none", got-shared)
	}
	if got := p.Stat().AcquireCount(); got < all+2 {
		t.Errorf("database/sql made %d acquires, want a whole connection for each of its 2 uses", got-all)
	}
}
