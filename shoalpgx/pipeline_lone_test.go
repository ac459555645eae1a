package shoalpgx

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A lone caller's statements keep to one shared connection, as the package
// doc says, though two are open and idle between its statements: Exec,
// Query, QueryRow and SendBatch, each sent once the last is answered, all
// run on one backend.
func TestPipelineLoneCallerKeepsToOneConnection(t *testing.T) {
	tr := &pidTracer{}
	p := newPipelinedPool(t, 4, 8, func(c *Config) { c.ConnConfig.Tracer = tr })
	ctx := pgtest.Ctx(t)
	pgtest.WaitFor(t, 5*time.Second, "two shared connections open", func() bool { return len(p.pipe.conns()) == 2 })
	const sql = "select $1::int"
	for i := range 40 {
		var err error
		switch i % 4 {
		case 0:
			err = p.QueryRow(ctx, sql, i).Scan(new(int))
		case 1:
			var rows pgx.Rows
			if rows, err = p.Query(ctx, sql, i); err == nil {
				_, err = pgx.CollectExactlyOneRow(rows, pgx.RowTo[int])
			}
		case 2:
			b := &pgx.Batch{}
			b.Queue(sql, i)
			err = p.SendBatch(ctx, b).Close()
		case 3:
			_, err = p.Exec(ctx, sql, i)
		}
		if err != nil {
			t.Fatalf("statement %d: %v", i, err)
		}
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	pids := map[uint32]int{}
	for _, pid := range append(tr.ends, tr.batchEnds...) {
		pids[pid]++
	}
	if len(pids) != 1 || len(tr.ends)+len(tr.batchEnds) != 40 {
		t.Fatalf("a lone caller's 40 statements ran on backends %v, want one", pids)
	}
	if whole := p.core.Stats().Acquires; whole != 0 {
		t.Fatalf("%d whole connections acquired: the statements were not all pipelined", whole)
	}
}

// A lone caller reads its own answer on its own goroutine, as on a whole
// connection, rather than wait for the connection's reader to hand it
// over: a notice its statement raises, which the reader passes to
// ConnConfig.OnNotice as it reads it, reaches OnNotice on the caller's
// goroutine, for every statement, the first (prepared beside its run)
// among them.
func TestPipelineLoneCallerReadsItsOwnAnswer(t *testing.T) {
	admin := pgtest.AdminConn(t)
	ctx := pgtest.Ctx(t)
	fn := fmt.Sprintf("pipe_lone_notice_%d", os.Getpid())
	if _, err := admin.Exec(ctx, "create or replace function "+fn+"(n int) returns int language plpgsql as $$ begin raise notice 'lone %', n; return n; end $$"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "drop function "+fn) })
	var mu sync.Mutex
	var stacks []string
	p := newPipelinedPool(t, 4, 8, func(c *Config) {
		c.ConnConfig.OnNotice = func(*pgconn.PgConn, *pgconn.Notice) {
			buf := make([]byte, 64<<10)
			buf = buf[:runtime.Stack(buf, false)]
			mu.Lock()
			stacks = append(stacks, string(buf))
			mu.Unlock()
		}
	})
	shared := p.Stat().Pipelined().Acquires
	const n = 20
	for i := range n {
		var got int
		if err := p.QueryRow(ctx, "select "+fn+"($1)", i).Scan(&got); err != nil || got != i {
			t.Fatal(got, err)
		}
	}
	if s := p.Stat().Pipelined().Acquires - shared; s != n {
		t.Fatalf("%d of the %d statements ran on a shared connection", s, n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stacks) != n {
		t.Fatalf("%d notices, want %d", len(stacks), n)
	}
	for i, s := range stacks {
		if !strings.Contains(s, "TestPipelineLoneCallerReadsItsOwnAnswer") || strings.Contains(s, "readLoop") {
			t.Fatalf("statement %d's answer was read on another goroutine than its caller's:\n%s", i, s)
		}
	}
}
