package shoalpgx

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// Against the server: a session statement behind an empty one (a leading
// semicolon, which PostgreSQL's parser skips even in a prepared statement)
// takes a whole connection. Query sends it in the extended protocol, as
// one statement, so only the look at its first keyword keeps it off a
// shared connection.
func TestPipelineSessionStatementAfterAnEmptyOneTakesAWholeConnection(t *testing.T) {
	p := newPipelinedPool(t, 4, 8, nil)
	ctx := pgtest.Ctx(t)
	for _, sql := range []string{
		";set application_name = 'after_empty'",
		" ; ;\n-- a comment\n;set search_path = public",
		"; /* a comment */ listen shoal_after_empty",
	} {
		before, whole := p.Stat().Pipelined().Acquires, p.core.Stats().Acquires
		rows, err := p.Query(ctx, sql)
		if err != nil {
			t.Fatalf("%q: %v", sql, err)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Fatalf("%q: %v", sql, err)
		}
		if n := p.Stat().Pipelined().Acquires - before; n != 0 {
			t.Errorf("%q: %d acquires of a shared connection, want none", sql, n)
		}
		if p.core.Stats().Acquires == whole {
			t.Errorf("%q: no whole connection acquired", sql)
		}
	}
	// Nor does the setting reach the statements that share connections.
	for range 4 {
		var name string
		if err := p.QueryRow(ctx, "select current_setting('application_name')").Scan(&name); err != nil {
			t.Fatal(err)
		}
		if name == "after_empty" {
			t.Fatal("a shared connection's session took the SET behind an empty statement")
		}
	}
}

// Against the server: a DO block takes a whole connection, whatever the
// path. Its code may do anything a session statement does (a SET, a
// temporary table), where the look at the text would not see it. An Exec
// of one already did, its semicolons making it text of several statements
// to that look; sent by Query or in a batch, it shared a connection, and
// its SET reached other callers.
func TestPipelineDoBlockTakesAWholeConnection(t *testing.T) {
	p := newPipelinedPool(t, 4, 8, nil)
	ctx := pgtest.Ctx(t)
	const do = "do $$ begin set application_name = 'in_a_do_block'; end $$"
	for what, run := range map[string]func() error{
		"Query": func() error {
			rows, err := p.Query(ctx, do)
			if err != nil {
				return err
			}
			rows.Close()
			return rows.Err()
		},
		"SendBatch": func() error {
			b := &pgx.Batch{}
			b.Queue(do)
			return p.SendBatch(ctx, b).Close()
		},
	} {
		before, whole := p.Stat().Pipelined().Acquires, p.core.Stats().Acquires
		if err := run(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n := p.Stat().Pipelined().Acquires - before; n != 0 {
			t.Errorf("%s: %d acquires of a shared connection, want none", what, n)
		}
		if p.core.Stats().Acquires == whole {
			t.Errorf("%s: no whole connection acquired", what)
		}
	}
	for range 4 {
		var name string
		if err := p.QueryRow(ctx, "select current_setting('application_name')").Scan(&name); err != nil {
			t.Fatal(err)
		}
		if name == "in_a_do_block" {
			t.Fatal("a shared connection's session took the SET of a DO block")
		}
	}
}
