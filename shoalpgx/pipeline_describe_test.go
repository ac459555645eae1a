package shoalpgx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// storedColumns are the columns the describe tests store a value of each
// encoding in: the row number, text, json, jsonb and bytea.
const storedColumns = "n int, t text, j json, jb jsonb, b bytea"

// awkwardBytes is the bytea the describe tests store: a NUL, a backslash
// before an x, a byte that is not UTF-8 and a quote, which a text
// encoding of the bytes would mangle.
var awkwardBytes = []byte{0, '\\', 'x', 0xff, '\''}

// wantStoredRows reads table (storedColumns) back and checks that it has n
// rows, each with "hi" as text, {"a":1} as json and jsonb, and
// awkwardBytes as bytea.
func wantStoredRows(t *testing.T, p *Pool, table string, n int) {
	t.Helper()
	rows, err := p.Query(pgtest.Ctx(t), "select n, t, j::text, jb::text, b from "+table+" order by n")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		N        int
		T, J, JB string
		B        []byte
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d rows, want %d", len(got), n)
	}
	for _, r := range got {
		if r.T != "hi" || r.J != `{"a":1}` || r.JB != `{"a": 1}` || !bytes.Equal(r.B, awkwardBytes) {
			t.Errorf("run %d stored text %q, json %q, jsonb %q, bytea %x; want %q, %q, %q, %x", r.N+1, r.T, r.J, r.JB, r.B, "hi", `{"a":1}`, `{"a": 1}`, awkwardBytes)
		}
	}
}

// A byte slice is encoded as its parameter's type on a statement's first
// run on a shared connection, as pgx's default mode encodes it and as the
// runs by name after it do: a text column stores the bytes, not their hex
// form, json and jsonb take them, and a bytea column still gets every
// byte; a struct or a map goes to json and jsonb as JSON. Each statement
// runs more than once on one connection, the first time with nothing
// prepared there: an Exec, QueryRows and a batch.
func TestPipelineBytesFirstRun(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	table := pipeTable(t, "pipe_bytes", storedColumns)
	insert := "insert into " + table + " (n, t, j, jb, b) values ($1, $2, $3, $4, $5)"
	for i := range 3 {
		if _, err := p.Exec(ctx, insert, i, []byte("hi"), []byte(`{"a":1}`), json.RawMessage(`{"a":1}`), awkwardBytes); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
	}
	wantStoredRows(t, p, table, 3)

	// A Go type the type map does not know, for json and jsonb, needs no
	// cast: pgx encodes it as its parameter's type, as JSON.
	for i := range 2 {
		var j, jb string
		err := p.QueryRow(ctx, "select $1::json::text, $2::jsonb::text",
			struct{ A int }{1}, map[string]any{"a": 1}).Scan(&j, &jb)
		if err != nil || j != `{"A":1}` || jb != `{"a": 1}` {
			t.Errorf("a struct and a map for json and jsonb, run %d: %q, %q, %v; want %q, %q", i+1, j, jb, err, `{"A":1}`, `{"a": 1}`)
		}
	}

	for i := range 2 {
		var s string
		if err := p.QueryRow(ctx, "select $1::text || '!'", []byte("hi")).Scan(&s); err != nil || s != "hi!" {
			t.Errorf("QueryRow, run %d: %q, %v; want %q", i+1, s, err, "hi!")
		}
	}

	for i := range 2 {
		// Both statements wait for their preparations, together.
		b := &pgx.Batch{}
		b.Queue("select $1::jsonb::text", map[string]any{"b": 2})
		b.Queue("select length($1::text)", []byte("four"))
		br := p.SendBatch(ctx, b)
		var jb string
		var n int
		err1 := br.QueryRow().Scan(&jb)
		err2 := br.QueryRow().Scan(&n)
		if err := br.Close(); err1 != nil || err2 != nil || err != nil || jb != `{"b": 2}` || n != 4 {
			t.Errorf("batch, run %d: %q, length %d (%v, %v, %v); want %q, 4", i+1, jb, n, err1, err2, err, `{"b": 2}`)
		}
	}
}

// A caller waiting for its statement's preparation returns when its
// context ends, and the shared connection stays: the preparation is
// answered behind a slow statement and the next caller runs by name.
func TestPipelineBytesFirstRunGivesUp(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	conn := oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	slow := make(chan error, 1)
	go func() {
		_, err := p.Exec(ctx, "select pg_sleep(1)")
		slow <- err
	}()
	pgtest.WaitFor(t, 5*time.Second, "the slow statement at the server", func() bool {
		return conn.pace.atServer.Load() > 0
	})
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	var s string
	err := p.QueryRow(short, "select $1::text", []byte("hi")).Scan(&s)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a caller whose context ended while its statement was being prepared: %q, %v; want its deadline", s, err)
	}
	select {
	case <-slow:
		t.Fatal("the caller returned only once the slow statement ahead of its preparation was answered")
	default:
	}
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	if err := p.QueryRow(ctx, "select $1::text", []byte("hi")).Scan(&s); err != nil || s != "hi" {
		t.Fatalf("after: %q, %v; want %q", s, err, "hi")
	}
	if cs := p.pipe.conns(); len(cs) != 1 || cs[0] != conn {
		t.Errorf("the shared connection was replaced: %d open", len(cs))
	}
}

// Past StatementCacheCapacity a statement that needs describing runs on a
// whole connection, where pgx describes it: unnamed, a []byte would go as
// bytea and a text column store its hex form. Traced once, there.
func TestPipelineBytesFullCache(t *testing.T) {
	tr := &pidTracer{}
	p := newPipelinedPool(t, 2, 8, func(c *Config) {
		c.ConnConfig.StatementCacheCapacity = 1
		c.ConnConfig.Tracer = tr
	})
	oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	table := pipeTable(t, "pipe_bytes_full", "t text")
	if _, err := p.Exec(ctx, "select $1::int", 1); err != nil { // fills the cache
		t.Fatal(err)
	}
	tr.mu.Lock()
	tr.starts, tr.ends = nil, nil
	tr.mu.Unlock()
	if _, err := p.Exec(ctx, "insert into "+table+" (t) values ($1)", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	starts, ends := len(tr.starts), len(tr.ends)
	tr.mu.Unlock()
	if starts != 1 || ends != 1 {
		t.Errorf("the insert traced %d starts and %d ends, want 1 of each", starts, ends)
	}
	var s string
	if err := p.QueryRow(ctx, "select t from "+table).Scan(&s); err != nil || s != "hi" {
		t.Errorf("stored %q, %v; want %q", s, err, "hi")
	}
}

// Callers running the same new statement at once on one shared connection,
// with a []byte for a text column: every one stores the bytes.
func TestPipelineBytesFirstRunTogether(t *testing.T) {
	p := newPipelinedPool(t, 2, 16, nil)
	oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	table := pipeTable(t, "pipe_bytes_together", "i int, t text")
	for i := range 200 {
		sql := fmt.Sprintf("insert into %s (i, t) values ($1, $2) /* %d */", table, i)
		var wg sync.WaitGroup
		for k := range 6 {
			wg.Go(func() {
				var err error
				if k%2 == 0 {
					_, err = p.Exec(ctx, sql, i, "hi") // known type: unnamed beside its preparation
				} else {
					_, err = p.Exec(ctx, sql, i, []byte("hi"))
				}
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	var bad int
	if err := p.QueryRow(ctx, "select count(*) from "+table+" where t <> 'hi'").Scan(&bad); err != nil || bad != 0 {
		var s string
		_ = p.QueryRow(ctx, "select t from "+table+" where t <> 'hi' limit 1").Scan(&s)
		t.Errorf("%d rows stored something else than the bytes, such as %q (%v)", bad, s, err)
	}
}
