package shoalpgx

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
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
	// First, while the cache has room: it must not take a place.
	run("select pg_backend_pid(), $1::int + 3", pgx.QueryExecModeExec, 1)
	for _, sql := range stmts {
		run(sql, 1)
		run(sql, 2)
	}
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
	if f := resultFormat(t, ctx, p, "select $1::int + 10", 1, 11); f != pgx.TextFormatCode {
		t.Fatalf("first run: format %d, want text (%d), unnamed", f, pgx.TextFormatCode)
	}
	for i := range 3 {
		if f := resultFormat(t, ctx, p, "select $1::int + 10", 1, 11); f != pgx.BinaryFormatCode {
			t.Fatalf("run %d: format %d, want binary (%d), by name", i+2, f, pgx.BinaryFormatCode)
		}
	}
}

// resultFormat runs sql, pipelined, with arg and returns the format its
// one int column came back in: text for a statement run unnamed, binary
// for one run by name. The value must be want.
func resultFormat(t *testing.T, ctx context.Context, p *Pool, sql string, arg, want int) int16 {
	t.Helper()
	rows, err := p.Query(ctx, sql, arg)
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
	if err := rows.Err(); err != nil || v != want {
		t.Fatalf("%s: got %d, %v; want %d", sql, v, err, want)
	}
	return f
}

// A statement whose arguments fail to encode is never sent: the
// connection's cache forgets it, so that the statement is prepared the
// next time it runs, and that run waits for its preparation and goes by
// name, as pgx describes a statement again after such a failure
// (TestPipelineArgumentPgxCannotEncodeFailsAfterTheFirstRun).
func TestPipelineStatementPreparedAfterAnArgumentFailedToEncode(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	const sql = "select $1::int + 10"
	if _, err := p.Exec(ctx, sql, make(chan int)); err == nil {
		t.Fatal("a channel encoded as an int")
	}
	for i := range 2 {
		if f := resultFormat(t, ctx, p, sql, i, 10+i); f != pgx.BinaryFormatCode {
			t.Fatalf("run %d after the failure: format %d, want binary (%d), by name", i+1, f, pgx.BinaryFormatCode)
		}
	}
}

// preparedOnShared returns the statements prepared on the one shared
// connection (oneSharedConn), by a query that is itself never prepared.
func preparedOnShared(t *testing.T, ctx context.Context, p *Pool) []string {
	t.Helper()
	var prepared []string
	err := p.QueryRow(ctx, "select coalesce(array_agg(statement order by prepare_time), '{}') from pg_prepared_statements", pgx.QueryExecModeExec).Scan(&prepared)
	if err != nil {
		t.Fatal(err)
	}
	return prepared
}

// A cached statement that the schema changed under (its result type, here)
// fails once with the server's error, as in pgx; then the connection
// deallocates it with its next request and prepares it again, by name
// from the run after. Query, Exec and SendBatch alike.
func TestPipelineInvalidatedStatementIsPreparedAgain(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	for _, name := range []string{"query", "exec", "batch"} {
		t.Run(name, func(t *testing.T) {
			table := pipeTable(t, "pipe_inval_"+name, "a int")
			sql := "select * from " + table + " where $1::int = 1"
			run := func() error {
				switch name {
				case "batch":
					b := &pgx.Batch{}
					b.Queue(sql, 1)
					return p.SendBatch(ctx, b).Close()
				case "exec":
					_, err := p.Exec(ctx, sql, 1)
					return err
				}
				rows, err := p.Query(ctx, sql, 1)
				if err != nil {
					return err
				}
				rows.Close()
				return rows.Err()
			}
			for i := range 3 {
				if err := run(); err != nil {
					t.Fatalf("run %d: %v", i+1, err)
				}
			}
			if _, err := p.Exec(ctx, "alter table "+table+" add column b int"); err != nil {
				t.Fatal(err)
			}
			var pgErr *pgconn.PgError
			if err := run(); !errors.As(err, &pgErr) || pgErr.Code != "0A000" {
				t.Fatalf("first run after the change: %v, want SQLSTATE 0A000", err)
			}
			for i := range 3 {
				if err := run(); err != nil {
					t.Fatalf("run %d after the change: %v", i+2, err)
				}
			}
			n := 0
			for _, st := range preparedOnShared(t, ctx, p) {
				if st == sql {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("%q prepared %d times on the shared connection, want once: the old name deallocated", sql, n)
			}
		})
	}
}

// A preparation that fails (the table is missing) is forgotten: once the
// table exists, the statement is prepared again and runs by name.
func TestPipelineFailedPreparationIsForgotten(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	table := pipeTable(t, "pipe_prepfail", "a int")
	if _, err := p.Exec(ctx, "drop table "+table); err != nil {
		t.Fatal(err)
	}
	sql := "select $1::int + 10 from (select 1) one left join " + table + " on false"
	var pgErr *pgconn.PgError
	if _, err := p.Exec(ctx, sql, 1); !errors.As(err, &pgErr) || pgErr.Code != "42P01" {
		t.Fatalf("with the table gone: %v, want SQLSTATE 42P01", err)
	}
	if _, err := p.Exec(ctx, "create table "+table+" (a int)"); err != nil {
		t.Fatal(err)
	}
	resultFormat(t, ctx, p, sql, 1, 11)
	if f := resultFormat(t, ctx, p, sql, 1, 11); f != pgx.BinaryFormatCode {
		t.Fatalf("second run with the table: format %d, want binary (%d), by name", f, pgx.BinaryFormatCode)
	}
}

// preparedThenChanged runs a statement reading a new table twice, so that
// the shared connection prepares it, then adds a column to the table, so
// that the prepared statement no longer fits; it returns the statement.
func preparedThenChanged(t *testing.T, p *Pool, name string) string {
	t.Helper()
	ctx := pgtest.Ctx(t)
	table := pipeTable(t, name, "a int")
	sql := "select * from " + table + " where $1::int = 1"
	for range 2 {
		if _, err := p.Exec(ctx, sql, 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Exec(ctx, "alter table "+table+" add column b int"); err != nil {
		t.Fatal(err)
	}
	return sql
}

// A deallocation waits for a request that is sent: a statement invalidated
// and then a request whose arguments fail to encode leave the old name to
// the next request, which deallocates it.
func TestPipelineDeallocationOutlivesAnUnsentRequest(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	sql := preparedThenChanged(t, p, "pipe_dealloc")
	var pgErr *pgconn.PgError
	if _, err := p.Exec(ctx, sql, 1); !errors.As(err, &pgErr) || pgErr.Code != "0A000" {
		t.Fatalf("after the change: %v, want SQLSTATE 0A000", err)
	}
	if _, err := p.Exec(ctx, "select $1::int", make(chan int)); err == nil {
		t.Fatal("a channel encoded as an int")
	}
	if prepared := preparedOnShared(t, ctx, p); slices.Contains(prepared, sql) {
		t.Fatalf("%q is still prepared on the shared connection after the next request", sql)
	}
}

// A deallocation outlives a request whose caller gave up while it waited in
// the queue: the request never left, so the next request that does
// deallocates the old name.
func TestPipelineDeallocationOutlivesAnAbandonedRequest(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	c := oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	sql := preparedThenChanged(t, p, "pipe_dealloc_gone")
	inHand := func(n int) func() bool {
		return func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return len(c.pending)-len(c.queue) >= n
		}
	}
	// Two sleeps at the server hold what comes next in the queue
	// (pipeCorkAt): the statement the change invalidated, then two more
	// sleeps, which go out together when the first is answered. When the
	// invalidated statement has failed, those two are at the server and
	// the request after it waits in the queue, carrying the deallocation.
	done := make(chan error, 4)
	sleep := func() {
		_, err := p.Exec(ctx, "select pg_sleep(0.5)")
		done <- err
	}
	go sleep()
	go sleep()
	pgtest.WaitFor(t, 5*time.Second, "two sleeps at the server", inHand(2))
	failed := make(chan error, 1)
	go func() {
		_, err := p.Exec(ctx, sql, 1)
		failed <- err
	}()
	pgtest.WaitFor(t, 5*time.Second, "the invalidated statement queued", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.queue) == 1
	})
	go sleep()
	go sleep()
	var pgErr *pgconn.PgError
	if err := <-failed; !errors.As(err, &pgErr) || pgErr.Code != "0A000" {
		t.Fatalf("after the change: %v, want SQLSTATE 0A000", err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := p.Exec(short, "select $1::int", 7); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the queued statement: %v, want its deadline", err)
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if prepared := preparedOnShared(t, ctx, p); slices.Contains(prepared, sql) {
		t.Fatalf("%q is still prepared on the shared connection after the next request", sql)
	}
}

// A cached statement whose parameter types the schema change made wrong
// (a column compared to an int argument is now text) fails at the server
// with an error other than 0A000: the server plans it again with the types
// it was prepared with, and "text = integer" has no operator (42883). pgx
// forgets a cached statement on any error and prepares it afresh; the
// shared connection must too, or every later run of it on that connection
// fails the same way, for as long as the connection lives. Query, Exec
// and SendBatch alike.
func TestPipelineStatementWithStaleParameterTypesIsPreparedAgain(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	for _, name := range []string{"query", "exec", "batch"} {
		t.Run(name, func(t *testing.T) {
			table := pipeTable(t, "pipe_stale_"+name, "a int")
			sql := "select count(*) from " + table + " where a = $1"
			run := func(arg any) error {
				switch name {
				case "batch":
					b := &pgx.Batch{}
					b.Queue(sql, arg)
					return p.SendBatch(ctx, b).Close()
				case "exec":
					_, err := p.Exec(ctx, sql, arg)
					return err
				}
				rows, err := p.Query(ctx, sql, arg)
				if err != nil {
					return err
				}
				rows.Close()
				return rows.Err()
			}
			for i := range 3 {
				if err := run(1); err != nil {
					t.Fatalf("run %d: %v", i+1, err)
				}
			}
			if _, err := p.Exec(ctx, "alter table "+table+" alter column a type text"); err != nil {
				t.Fatal(err)
			}
			// The first run after the change may fail, as in pgx;
			// from the next one on, the statement fits again.
			first := run("1")
			for i := range 3 {
				if err := run("1"); err != nil {
					t.Fatalf("run %d after the change: %v (the first: %v)", i+2, err, first)
				}
			}
		})
	}
}

// A cached statement whose parameter a schema change widened (an int
// column made bigint, for ids past 2^31) still has the old parameter type
// on the shared connection, so an argument that needs the new one fails
// to encode, before anything is sent. pgx forgets a cached statement whose
// arguments failed to encode and prepares it afresh; the shared connection
// must too, or every such argument fails on it for as long as it lives.
func TestPipelineStatementWithWidenedParameterIsPreparedAgain(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	table := pipeTable(t, "pipe_widened", "a int")
	sql := "insert into " + table + " (a) values ($1)"
	for i := range 3 {
		if _, err := p.Exec(ctx, sql, i); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
	}
	if _, err := p.Exec(ctx, "alter table "+table+" alter column a type bigint"); err != nil {
		t.Fatal(err)
	}
	const big = int64(5_000_000_000)
	// The first run after the change may fail, as in pgx; from the next
	// one on, the statement takes a bigint.
	_, first := p.Exec(ctx, sql, big)
	for i := range 3 {
		if _, err := p.Exec(ctx, sql, big); err != nil {
			t.Fatalf("run %d after the change: %v (the first: %v)", i+2, err, first)
		}
	}
	var n int
	if err := p.QueryRow(ctx, "select count(*) from "+table+" where a = $1", big).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Fatalf("%d rows of %d, want 3 or more", n, big)
	}
}

// A statement forgotten while another caller's request that runs it by
// name is built but not yet queued is deallocated only by a request queued
// after that one: otherwise the Close, riding on a third caller's request
// that overtakes it, reaches the server first, and the Bind that follows
// fails with 26000 though its statement was fine. The test builds a
// request by name through the pool's own run, whose encoder it holds
// before the request is queued; meanwhile an argument that fails to encode
// makes the connection forget the statement, and another statement goes
// out and is answered.
func TestPipelineDeallocationWaitsForARequestBuiltByName(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	const sql = "select $1::int + 10"
	for range 2 {
		if _, err := p.Exec(ctx, sql, 1); err != nil {
			t.Fatal(err)
		}
	}
	built, release := make(chan bool, 1), make(chan struct{})
	r := newPipeReq(1)
	r.res[0].discard = true
	ran := make(chan error, 1)
	go func() {
		ran <- p.pipe.run(ctx, r, modeCached, func(b *pipeBuild, buf []byte) ([]byte, error) {
			buf, err := b.statement(buf, sql, []any{2}, false, &r.res[0])
			if err == nil {
				buf, err = (&pgproto3.Sync{}).Encode(buf)
			}
			built <- r.res[0].stmt != nil
			<-release
			return buf, err
		})
	}()
	var byName bool
	select {
	case byName = <-built:
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	if !byName {
		close(release)
		t.Fatal("the held request was built unnamed, want by name")
	}
	if _, err := p.Exec(ctx, sql, int64(5_000_000_000)); err == nil {
		close(release)
		t.Fatal("an int past 2^31 encoded as an int")
	}
	if _, err := p.Exec(ctx, "select $1::int", 7); err != nil {
		close(release)
		t.Fatal(err)
	}
	close(release)
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if err := r.result(0).err; err != nil {
		t.Fatalf("the request built by name before its statement was forgotten: %v", err)
	}
	if prepared := preparedOnShared(t, ctx, p); slices.Contains(prepared, sql) {
		t.Fatalf("%q is still prepared on the shared connection under its old name after the requests behind the held one", sql)
	}
}
