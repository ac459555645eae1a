package shoalpgx

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// Statements that leave state in the session go to a whole connection;
// the rest may share one. The look skips comments, nested ones included,
// and the words PostgreSQL allows before TEMP.
func TestShareable(t *testing.T) {
	for _, tc := range []struct {
		sql   string
		share bool
	}{
		{"select 1", true},
		{"  (select 1)", true},
		{"insert into t values ($1)", true},
		{"insert into temp values (1)", false}, // reads as INTO TEMP: costs only the sharing
		{"insert into temp_log values (1)", true},
		{"with x as (select 1) select * from x", true},
		{"select pg_advisory_xact_lock(1)", true},
		{"create table t (a int)", true},
		{"create unlogged table t (a int)", true},
		{"BEGIN ISOLATION LEVEL SERIALIZABLE", false},
		{"end transaction", false},
		{"rollback work", false},
		{"abort work", false},
		{"release savepoint s", false},
		{"move next in c", false},
		{"close c", false},
		{"load 'auto_explain'", false},
		{"do $$ begin perform 1; end $$", false},
		{"DO LANGUAGE plpgsql $$BEGIN END$$", false},
		{"call my_procedure(1)", true}, // as any function call
		{"select do_something()", true},
		{"select pg_advisory_unlock(1)", false},
		{"select dblink_connect('c', 'dbname=x')", false},
		{"start transaction", false},
		{"commit work", false},
		{"savepoint s", false},
		{"set search_path = x", false},
		{"SET LOCAL statement_timeout = 1", false},
		{"reset all", false},
		{"listen chan", false},
		{"unlisten *", false},
		{"prepare p as select 1", false},
		{"execute p", false},
		{"deallocate all", false},
		{"declare c cursor for select 1", false},
		{"fetch c", false},
		{"lock table t", false},
		{"copy t from stdin", false},
		{"discard all", false},
		{"create temp table t (a int)", false},
		{"CREATE TEMPORARY TABLE t (a int)", false},
		{"create local temporary table t (a int)", false},
		{"create global temp table t (a int)", false},
		{"create or replace temp view v as select 1", false},
		{"CREATE OR REPLACE TEMPORARY VIEW v AS SELECT 1", false},
		{"create or replace view v as select 1", true},
		{"select 1 into temp t", false},
		{"SELECT a INTO TEMPORARY TABLE t FROM x", false},
		{"select a into t2 from x", true},
		{"select 1 into /* a comment */ temp t", false},
		{"select 1 into -- a comment\n temporary t", false},
		{"select 1 into local temp t", false},
		{"UPDATE pg_catalog.PG_SETTINGS SET setting = 'x' WHERE name = 'search_path'", false},
		{"with s as (update pg_settings set setting = 'x' where name = 'work_mem' returning 1) select * from s", false},
		{"SELECT 1 INTO GLOBAL /* c */ TEMPORARY TABLE t", false},
		{"select local into global_t from x", true},
		{"select 1 into local_t from temp_x", true},
		{"create table pg_temp.t (a int)", false},
		{"CREATE VIEW PG_TEMP.v AS SELECT 1", false},
		{"select 1 into pg_temp.t", false},
		{"create function pg_temp.f() returns int as 'select 1' language sql", false},
		{"explain analyze create temp table t as select 1", false},
		{"EXPLAIN (ANALYZE, BUFFERS) CREATE TEMPORARY TABLE t AS SELECT 1", false},
		{"explain verbose declare c cursor for select 1", false},
		{"explain analyze select 1", true},
		{"explain analyse create temp table t as select 1", false},
		{"get_user", false},  // one word: a prepared statement's name to pgx
		{"get_user\n", true}, // not the name, to pgx either: it runs as SQL, and fails alike
		{"select(1)", false}, // one word too: costs only the sharing
		{"select\t1", true},
		{"select pg_advisory_lock(1)", false},
		{"select PG_TRY_ADVISORY_LOCK(1)", false},
		{"select set_config('a.b', 'c', false)", false},
		{"-- a comment\nset x = 1", false},
		{"/* a comment */ set x = 1", false},
		{"/* outer /* inner */ still a comment */ set x = 1", false},
		{"/* outer /* inner */ still a comment */ select 1", true},
		{"/* never ends", true}, // the server refuses it, alone
		{";set x = 1", false},   // the server drops the empty statement
		{" ; ;\n-- c\n; begin", false},
		{"select 1;", true},
	} {
		if got := shareable(tc.sql); got != tc.share {
			t.Errorf("shareable(%q) = %v, want %v", tc.sql, got, tc.share)
		}
	}
}

// pgx's options that need a whole connection send the statement there:
// the simple protocol, chosen result formats and query rewriters other
// than named arguments.
func TestPipeOptions(t *testing.T) {
	var rewriter pgx.QueryRewriter = rewriteFunc(func(sql string, args []any) (string, []any) { return sql, args })
	for _, tc := range []struct {
		name string
		args []any
		mode pgx.QueryExecMode
		ok   bool
		sm   stmtMode
	}{
		{"plain, cached", []any{1}, pgx.QueryExecModeCacheStatement, true, modeCached},
		{"exec mode", []any{1}, pgx.QueryExecModeExec, true, modeUnnamed},
		{"describe exec", []any{1}, pgx.QueryExecModeDescribeExec, true, modeDescribed},
		{"cache describe", []any{1}, pgx.QueryExecModeCacheDescribe, true, modeDescribed},
		{"simple protocol by default", []any{1}, pgx.QueryExecModeSimpleProtocol, false, 0},
		{"simple protocol per statement", []any{pgx.QueryExecModeSimpleProtocol, 1}, pgx.QueryExecModeCacheStatement, false, 0},
		{"exec per statement", []any{pgx.QueryExecModeExec, 1}, pgx.QueryExecModeCacheStatement, true, modeUnnamed},
		{"describe exec per statement", []any{pgx.QueryExecModeDescribeExec, 1}, pgx.QueryExecModeExec, true, modeDescribed},
		{"named arguments", []any{pgx.NamedArgs{"a": 1}}, pgx.QueryExecModeCacheStatement, true, modeCached},
		{"result formats", []any{pgx.QueryResultFormats{pgx.BinaryFormatCode}, 1}, pgx.QueryExecModeCacheStatement, false, 0},
		{"result formats by OID", []any{pgx.QueryResultFormatsByOID{}, 1}, pgx.QueryExecModeCacheStatement, false, 0},
		{"a rewriter of the caller's", []any{rewriter, 1}, pgx.QueryExecModeCacheStatement, false, 0},
	} {
		_, _, mode, ok := pipeOptions(tc.args, tc.mode)
		if sm := modeOf(mode); ok != tc.ok || ok && sm != tc.sm {
			t.Errorf("%s: ok %v mode %v, want ok %v mode %v", tc.name, ok, modeOf(mode), tc.ok, tc.sm)
		}
	}
}

type rewriteFunc func(sql string, args []any) (string, []any)

func (f rewriteFunc) RewriteQuery(_ context.Context, _ *pgx.Conn, sql string, args []any) (string, []any, error) {
	sql, args = f(sql, args)
	return sql, args, nil
}

// Against the server: a statement that leaves session state takes a whole
// connection, and the shared pool never sees it; a plain one is shared.
func TestPipelineSessionStatementsTakeAWholeConnection(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 4; c.Pipeline = 8 })
	ctx := context.Background()
	shared := func() int64 { return p.Stat().Pipelined().Acquires }
	for _, sql := range []string{
		"set application_name = 'routed'",
		"create or replace temp view shoal_routed as select 1",
		"/* a /* nested */ comment */ set search_path = public",
		"select 1 into temp shoal_routed_t",
		"select 1 into local temp shoal_routed_l",
		"SELECT 1 INTO GLOBAL /* c */ TEMPORARY TABLE shoal_routed_g",
		"update pg_settings set setting = 'routed_too' where name = 'application_name'",
		"create table pg_temp.shoal_routed_p (a int)",
		"select 1; select 2", // several statements, no arguments: one simple query
	} {
		before, whole := shared(), p.core.Stats().Acquires
		if _, err := p.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if n := shared(); n != before {
			t.Errorf("%s: %d acquires of a shared connection, want none", sql, n-before)
		}
		if n := p.core.Stats().Acquires; n == whole {
			t.Errorf("%s: no whole connection acquired", sql)
		}
	}
	// Ping and CopyFrom use a whole connection too.
	table := pipeTable(t, "pipe_routed_copy", "id int")
	for what, call := range map[string]func() error{
		"Ping": func() error { return p.Ping(ctx) },
		"CopyFrom": func() error {
			_, err := p.CopyFrom(ctx, pgx.Identifier{table}, []string{"id"}, pgx.CopyFromRows([][]any{{1}, {2}}))
			return err
		},
	} {
		before, whole := shared(), p.core.Stats().Acquires
		if err := call(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n := shared(); n != before {
			t.Errorf("%s: %d acquires of a shared connection, want none", what, n-before)
		}
		if n := p.core.Stats().Acquires; n == whole {
			t.Errorf("%s: no whole connection acquired", what)
		}
	}
	before := shared()
	if _, err := p.Exec(ctx, "select $1::int", 1); err != nil {
		t.Fatal(err)
	}
	if shared() == before {
		t.Fatal("a plain statement did not share a connection")
	}
}

// A statement passed by the name of one that AfterConnect prepared runs as
// pgx runs it, with pipelining as without: the name, one word, takes a
// whole connection, where pgx finds it among the connection's prepared
// statements. Sent as SQL on a shared connection it would be a syntax
// error.
func TestPipelinePreparedStatementNameRunsAsWithoutPipelining(t *testing.T) {
	for _, depth := range []int{0, 8} {
		t.Run(fmt.Sprintf("pipeline=%d", depth), func(t *testing.T) {
			p := newPipelinedPool(t, 4, depth, func(c *Config) {
				c.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
					_, err := conn.Prepare(ctx, "plus_one", "select $1::int + 1")
					return err
				}
			})
			ctx := pgtest.Ctx(t)
			var n int
			if err := p.QueryRow(ctx, "plus_one", 41).Scan(&n); err != nil || n != 42 {
				t.Fatalf("QueryRow: %d, %v; want 42", n, err)
			}
			rows, err := p.Query(ctx, "plus_one", 1)
			if err != nil {
				t.Fatal(err)
			}
			got, err := pgx.CollectRows(rows, pgx.RowTo[int])
			if err != nil || len(got) != 1 || got[0] != 2 {
				t.Fatalf("Query: %v, %v; want [2]", got, err)
			}
			if tag, err := p.Exec(ctx, "plus_one", 1); err != nil || tag.String() != "SELECT 1" {
				t.Fatalf("Exec: %q, %v", tag, err)
			}
			b := &pgx.Batch{}
			b.Queue("plus_one", 2).QueryRow(func(row pgx.Row) error { return row.Scan(&n) })
			if err := p.SendBatch(ctx, b).Close(); err != nil || n != 3 {
				t.Fatalf("SendBatch: %d, %v; want 3", n, err)
			}
		})
	}
}
