package shoalpgx

import (
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
