package shoalpgx

import (
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A shared connection prepares a statement of pgx's default mode the first
// time it runs it and runs it by name from then on, up to
// StatementCacheCapacity statements, after which the others run unnamed;
// a statement in QueryExecModeExec is never prepared. The server's own
// pg_prepared_statements, read on the same connection, says so.
func TestPipelineStatementCache(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, func(c *Config) { c.ConnConfig.StatementCacheCapacity = 2 })
	ctx := pgtest.Ctx(t)
	stmts := []string{
		"select pg_backend_pid(), $1::int + 0",
		"select pg_backend_pid(), $1::int + 1",
		"select pg_backend_pid(), $1::int + 2", // past the capacity
	}
	var pids []uint32
	run := func(sql string, args ...any) {
		t.Helper()
		var pid uint32
		var v int
		if err := p.QueryRow(ctx, sql, args...).Scan(&pid, &v); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		pids = append(pids, pid)
	}
	for _, sql := range stmts {
		run(sql, 1)
		run(sql, 2)
	}
	run("select pg_backend_pid(), $1::int + 3", pgx.QueryExecModeExec, 1)
	var pid uint32
	var prepared []string
	err := p.QueryRow(ctx, "select pg_backend_pid(), coalesce(array_agg(statement order by prepare_time), '{}') from pg_prepared_statements", pgx.QueryExecModeExec).Scan(&pid, &prepared)
	if err != nil {
		t.Fatal(err)
	}
	pids = append(pids, pid)
	if backends := slices.Compact(slices.Clone(pids)); len(backends) != 1 {
		t.Fatalf("a lone caller's statements ran on backends %v, want one: the check below reads one connection", pids)
	}
	want := stmts[:2]
	if !slices.Equal(prepared, want) {
		t.Fatalf("prepared on the shared connection:\n%s\nwant:\n%s", strings.Join(prepared, "\n"), strings.Join(want, "\n"))
	}
	c := sharedByPID(t, p, pid)
	c.stmts.mu.Lock()
	defer c.stmts.mu.Unlock()
	for _, sql := range want {
		if s := c.stmts.bySQL[sql]; s == nil || s.sd == nil {
			t.Errorf("%s: not in the connection's cache, prepared", sql)
		}
	}
}

// A cached statement runs by name from its second run, in the formats its
// types prefer: an int comes back in binary, where the first run, unnamed,
// has it in text.
func TestPipelineCachedStatementRunsByName(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	ctx := pgtest.Ctx(t)
	format := func() int16 {
		t.Helper()
		rows, err := p.Query(ctx, "select $1::int + 10", 1)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		if _, isPipe := rows.(*pipeRows); !isPipe {
			t.Fatalf("not pipelined: %T", rows)
		}
		f := rows.FieldDescriptions()[0].Format
		var v int
		for rows.Next() {
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
		}
		if err := rows.Err(); err != nil || v != 11 {
			t.Fatalf("got %d, %v; want 11", v, err)
		}
		return f
	}
	if f := format(); f != pgx.TextFormatCode {
		t.Fatalf("first run: format %d, want text (%d), unnamed", f, pgx.TextFormatCode)
	}
	for i := range 3 {
		if f := format(); f != pgx.BinaryFormatCode {
			t.Fatalf("run %d: format %d, want binary (%d), by name", i+2, f, pgx.BinaryFormatCode)
		}
	}
}
