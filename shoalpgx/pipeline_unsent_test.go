package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A statement queued for a shared connection that breaks before writing
// it never reached the server, so it goes to another connection and gets
// its answer; the statements written to the connection fail with it. Two
// statements wait on a lock, which is as many as the server is given at
// once, so that the third waits in the queue; then the backend is killed.
// Not while the pool closes (closing, as Close sets it first): then the
// queued statement fails with the connection.
func TestPipelineUnwrittenStatementGoesElsewhere(t *testing.T) {
	for _, closing := range []bool{false, true} {
		t.Run(fmt.Sprintf("closing=%v", closing), func(t *testing.T) { testUnwrittenGoesElsewhere(t, closing) })
	}
}

func testUnwrittenGoesElsewhere(t *testing.T, closing bool) {
	p := newPipelinedPool(t, 4, 8, nil)
	conn := oneSharedConn(t, p)
	victim := conn.pc.conn.PgConn().PID()
	counts := func() (pending, queued int) { return queueCounts(conn) }
	ctx, cancel := context.WithTimeout(pgtest.Ctx(t), 60*time.Second)
	defer cancel()
	const lock = 7321
	holdAdvisoryLock(t, lock)
	exec := pgx.QueryExecModeExec // no preparation joins the requests counted

	written := make(chan error, 2)
	for i := range 2 {
		go func() {
			var v int
			written <- p.QueryRow(ctx, "select $1::int from (select pg_advisory_xact_lock($2::bigint)) l", exec, i, lock).Scan(&v)
		}()
		pgtest.WaitFor(t, 5*time.Second, "the locked statement written", func() bool { p, q := counts(); return p == i+1 && q == 0 })
	}
	type answer struct {
		pid uint32
		v   int
		err error
	}
	queued := make(chan answer, 1)
	go func() {
		var a answer
		a.err = p.QueryRow(ctx, "select pg_backend_pid(), $1::int", exec, 3).Scan(&a.pid, &a.v)
		queued <- a
	}()
	pgtest.WaitFor(t, 5*time.Second, "the third statement queued", func() bool { p, q := counts(); return p == 3 && q == 1 })

	p.pipe.closing.Store(closing)
	if _, err := pgtest.AdminConn(t).Exec(ctx, "select pg_terminate_backend($1)", victim); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		err := <-written
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "57P01" {
			t.Errorf("a statement written to the killed backend: %v, want the server's error (SQLSTATE 57P01)", err)
		}
	}
	a := <-queued
	if closing {
		var pgErr *pgconn.PgError
		if !errors.As(a.err, &pgErr) || pgErr.Code != "57P01" {
			t.Fatalf("the queued statement, the pool closing: %v, want the connection's error (SQLSTATE 57P01)", a.err)
		}
		return
	}
	if a.err != nil || a.pid == victim || a.v != 3 {
		t.Fatalf("the queued statement: pid %d (the killed one %d), %d, %v; want its answer from another backend", a.pid, victim, a.v, a.err)
	}
}
