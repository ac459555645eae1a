package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A statement the server answered gets its answer though a write on its
// connection failed before the reader took that answer. The reader is held
// in its yield before a wait (yieldHook) while an INSERT's answer arrives;
// then the connection's sending side is shut, so the next statement's
// write fails. The INSERT's caller gets its answer, as its row at the
// server says it should; the next statement, of which nothing left, goes
// to the new connection that replaces the broken one.
func TestPipelineAnswersOutliveAFailedWrite(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	conn := oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	table := pipeTable(t, "pipe_writefail", "a int")
	held, hold := make(chan struct{}, 1), make(chan struct{})
	var armed atomic.Bool
	conn.mu.Lock()
	conn.yieldHook = func() {
		if armed.CompareAndSwap(true, false) {
			held <- struct{}{}
			<-hold
			return
		}
		runtime.Gosched()
	}
	conn.mu.Unlock()
	released := false
	release := func() {
		if !released {
			released = true
			close(hold)
		}
	}
	defer release()
	armed.Store(true)

	// The first statement is answered, and the reader, about to wait for
	// the INSERT's answer, yields and is held there.
	first, insert := make(chan error, 1), make(chan error, 1)
	go func() {
		_, err := p.Exec(ctx, "select pg_sleep(0.05)")
		first <- err
	}()
	pgtest.WaitFor(t, 5*time.Second, "the first statement in flight", func() bool {
		conn.mu.Lock()
		defer conn.mu.Unlock()
		return len(conn.pending) == 1
	})
	go func() {
		_, err := p.Exec(ctx, "insert into "+table+" select 7 from pg_sleep(0.2)")
		insert <- err
	}()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the reader did not yield before waiting for the INSERT's answer")
	}
	admin := pgtest.AdminConn(t)
	pid := conn.pc.conn.PgConn().PID()
	pgtest.WaitFor(t, 10*time.Second, "the INSERT answered", func() bool {
		var state string
		err := admin.QueryRow(ctx, "select state from pg_stat_activity where pid = $1", pid).Scan(&state)
		return err == nil && state == "idle"
	})

	if err := conn.nc.(*cancelGate).Conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	after := make(chan error, 1)
	go func() {
		var n int
		err := p.QueryRow(ctx, "select $1::int", 3).Scan(&n)
		if err == nil && n != 3 {
			err = fmt.Errorf("got %d, want 3", n)
		}
		after <- err
	}()
	pgtest.WaitFor(t, 10*time.Second, "the write failed", func() bool {
		conn.mu.Lock()
		defer conn.mu.Unlock()
		return conn.werr != nil && strings.Contains(conn.werr.Error(), "writing to a pipelined connection")
	})
	release()
	if err := <-insert; err != nil {
		t.Fatalf("the INSERT the server answered: %v", err)
	}
	// Nothing of it left, so it went to the connection that replaced
	// the broken one.
	if err := <-after; err != nil {
		t.Fatalf("the statement whose write failed: %v", err)
	}
	var n int
	if err := admin.QueryRow(ctx, "select count(*) from "+table+" where a = 7").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the INSERT's rows: %d, %v", n, err)
	}
	if _, err := p.Exec(ctx, "select 4"); err != nil {
		t.Fatalf("after the failed write: %v", err)
	}
}

// After a failed write the reader reads on for writeFailDrain at most, and
// a caller who was reading and whose context ends meanwhile does not lift
// that bound. Here the server sends nothing more (the backend waits on a
// lock the test holds): the reader's statement, written, holds the broken
// connection until the drain ends, and the statement whose write failed,
// of which nothing left, waits for the connection that replaces it. It
// gets its answer while the lock is still held, not once the server
// speaks again.
func TestPipelineDrainOutlivesAReadersDeadline(t *testing.T) {
	var held heldDialer
	p := newPipelinedPool(t, 2, 8, func(c *Config) { c.ConnConfig.DialFunc = held.dial })
	conn := oneSharedConn(t, p)
	hc := held.of(t, conn)
	ctx, cancel := context.WithTimeout(pgtest.Ctx(t), 60*time.Second)
	defer cancel()
	const lock = 7322
	unlock := holdAdvisoryLock(t, lock)
	exec := pgx.QueryExecModeExec // no preparation joins the requests counted

	readerCtx, readerGone := context.WithCancel(ctx)
	defer readerGone()
	reader := make(chan error, 1)
	go func() {
		var v int
		reader <- p.QueryRow(readerCtx, "select $1::int from (select pg_advisory_xact_lock($2::bigint)) l", exec, 1, lock).Scan(&v)
	}()
	pgtest.WaitFor(t, 5*time.Second, "the reader's statement written", func() bool { p, q := queueCounts(conn); return p == 1 && q == 0 })

	hc.failWrites()
	failed := make(chan error, 1)
	go func() {
		var v int
		err := p.QueryRow(ctx, "select $1::int", exec, 2).Scan(&v)
		if err == nil && v != 2 {
			err = fmt.Errorf("got %d, want 2", v)
		}
		failed <- err
	}()
	waitShut(t, ctx, hc.writeFailed, "the failed write")
	pgtest.WaitFor(t, 5*time.Second, "the connection marked", func() bool { return conn.broken() != nil })
	readerGone() // within the drain, which the reader's interruption cuts short
	if err := <-reader; !errors.Is(err, context.Canceled) {
		t.Fatalf("the reader: %v, want its context's error", err)
	}
	select {
	case err := <-failed:
		if err != nil {
			t.Fatalf("the statement whose write failed: %v", err)
		}
	case <-time.After(20 * writeFailDrain):
		t.Fatal("the broken connection is still held past its drain, by a server that sends nothing")
	}
	unlock()
}
