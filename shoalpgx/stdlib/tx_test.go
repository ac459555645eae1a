package stdlib_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/shoalpgx"
)

// sqlTestTable creates a table for one test, dropped at cleanup. It is a
// real table, not a temporary one, so that every connection sees it.
func sqlTestTable(t *testing.T, db *sql.DB, name string) {
	t.Helper()
	if _, err := db.ExecContext(pgtest.Ctx(t), "drop table if exists "+name+"; create table "+name+" (id int primary key)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := db.ExecContext(context.Background(), "drop table if exists "+name); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
}

// A committed transaction's writes are there for every connection, a
// rolled-back one's are not, and a transaction that failed does not commit.
func TestSQLTxCommitAndRollback(t *testing.T) {
	p := newTestPool(t, func(c *shoalpgx.Config) { c.MaxConns = 2 })
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)
	sqlTestTable(t, db, "shoalpgx_sqldb_tx")

	insert := func(id int, commit bool) {
		t.Helper()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "insert into shoalpgx_sqldb_tx values ($1)", id); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	insert(1, true)
	insert(2, false)

	// A failed transaction: its commit rolls back and says so.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "insert into shoalpgx_sqldb_tx values (3)"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "insert into shoalpgx_sqldb_tx values (1)"); err == nil {
		t.Fatal("a duplicate key was accepted")
	}
	if err := tx.Commit(); !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Fatalf("commit of a failed transaction: %v, want pgx.ErrTxCommitRollback", err)
	}

	// Read from the pgx side, on whichever connection: only 1 is there.
	rows, err := p.Query(ctx, "select id from shoalpgx_sqldb_tx order by id")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil || len(ids) != 1 || ids[0] != 1 {
		t.Fatalf("rows after commit, rollback and a failed commit: %v, %v; want [1]", ids, err)
	}
}

// A read-only transaction is refused writes by the server.
func TestSQLTxReadOnlyRefusesWrites(t *testing.T) {
	p := newTestPool(t, nil)
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)
	sqlTestTable(t, db, "shoalpgx_sqldb_ro")
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var ro string
	if err := tx.QueryRowContext(ctx, "show transaction_read_only").Scan(&ro); err != nil || ro != "on" {
		t.Fatalf("transaction_read_only = %q, %v; want on", ro, err)
	}
	_, err = tx.ExecContext(ctx, "insert into shoalpgx_sqldb_ro values (1)")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "25006" {
		t.Fatalf("insert in a read-only transaction: %v, want SQLSTATE 25006 (read_only_sql_transaction)", err)
	}
}

// Each isolation level database/sql has and PostgreSQL has too is the
// transaction's level at the server; the two PostgreSQL lacks are refused
// with an error that names them.
func TestSQLTxIsolationLevels(t *testing.T) {
	p := newTestPool(t, nil)
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)
	for level, want := range map[sql.IsolationLevel]string{
		sql.LevelDefault:         "read committed", // the server's default_transaction_isolation
		sql.LevelReadUncommitted: "read uncommitted",
		sql.LevelReadCommitted:   "read committed",
		sql.LevelRepeatableRead:  "repeatable read",
		sql.LevelSnapshot:        "repeatable read",
		sql.LevelSerializable:    "serializable",
	} {
		tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: level})
		if err != nil {
			t.Fatalf("%s: %v", level, err)
		}
		var got string
		err = tx.QueryRowContext(ctx, "show transaction_isolation").Scan(&got)
		_ = tx.Rollback()
		if err != nil || got != want {
			t.Errorf("%s: transaction_isolation = %q, %v; want %q", level, got, err, want)
		}
	}
	for _, level := range []sql.IsolationLevel{sql.LevelWriteCommitted, sql.LevelLinearizable} {
		tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: level})
		if err == nil {
			_ = tx.Rollback()
			t.Fatalf("%s was accepted", level)
		}
		if !strings.Contains(err.Error(), level.String()) || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("%s: %v, want an error naming the level", level, err)
		}
	}
}

// A connection database/sql closes inside a transaction, open or failed
// (a Raw callback or sql.Conn that began one by hand), is closed, not given
// back: the next holder gets another backend.
func TestSQLConnClosedInsideTransactionIsDiscarded(t *testing.T) {
	for _, state := range []string{"open", "failed"} {
		t.Run(state, func(t *testing.T) {
			p := newTestPool(t, func(c *shoalpgx.Config) { c.MaxConns = 1 })
			db := newTestDB(t, p)
			ctx := pgtest.Ctx(t)
			sc, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pid := sqlBackendPID(t, sc)
			if _, err := sc.ExecContext(ctx, "begin"); err != nil {
				t.Fatal(err)
			}
			if state == "failed" {
				if _, err := sc.ExecContext(ctx, "select 1/0"); err == nil {
					t.Fatal("1/0 succeeded")
				}
			}
			if err := sc.Close(); err != nil {
				t.Fatal(err)
			}
			pgtest.Settle(t, shoalStats(p))
			if s := p.Stat().Shoal(); s.Closed != 1 {
				t.Fatalf("stats %+v: want the connection closed", s)
			}
			c, err := p.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Release()
			pgtest.RequireClean(t, c.Conn())
			if c.Conn().PgConn().PID() == pid {
				t.Fatal("a connection closed by database/sql inside a transaction was handed out again")
			}
		})
	}
}
