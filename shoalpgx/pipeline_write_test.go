package shoalpgx

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A caller whose statement cannot be written, because the backend is busy
// and has stopped reading its socket, returns when its context ends, not
// when the backend reads again; the connection, whose message was cut
// half written, fails the statement it carried and is replaced, and the
// other connection's statement runs on.
func TestPipelineBlockedWriteReturnsWithItsContext(t *testing.T) {
	p := newPipelinedPool(t, 4, 8, nil) // two shared connections
	// Encoding the large statement below can take many seconds on a busy
	// machine under -race, so this test's bounds are wide: the sleepers
	// sleep far longer than it needs, and are cancelled once it is done.
	ctx, cancelAll := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancelAll()
	pgtest.WaitFor(t, 5*time.Second, "both shared connections open", func() bool { return len(p.pipe.conns()) == 2 })
	// Both shared connections busy, and capped at two (half of MaxConns):
	// the next statement queues behind one of them, rather than wait for a
	// third, and its backend reads nothing meanwhile.
	if err := p.SetMaxConns(4); err != nil {
		t.Fatal(err)
	}
	const sleep = "select pg_sleep(90)"
	sleepers := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := p.Exec(ctx, sleep)
			sleepers <- err
		}()
	}
	admin := pgtest.AdminConn(t)
	defer func() {
		// End the sleep still running, so that the pool closes promptly.
		if _, err := admin.Exec(context.WithoutCancel(ctx), "select pg_cancel_backend(pid) from pg_stat_activity where query = $1", sleep); err != nil {
			t.Error(err)
		}
	}()
	pgtest.WaitFor(t, 5*time.Second, "a statement in flight on each shared connection", func() bool {
		for _, c := range p.pipe.conns() {
			c.mu.Lock()
			n := len(c.pending)
			c.mu.Unlock()
			if n == 0 {
				return false
			}
		}
		return true
	})
	// 64 MB, more than loopback's socket buffers hold on either side. The
	// caller's context ends once its write is under way and stuck (a
	// writer at work for 100ms).
	big := strings.Repeat("x", 64<<20)
	short, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		defer cancel()
		stuck := 0
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && short.Err() == nil; time.Sleep(10 * time.Millisecond) {
			writing := false
			for _, c := range p.pipe.conns() {
				c.mu.Lock()
				writing = writing || c.writing && len(c.pending) >= 2
				c.mu.Unlock()
			}
			if !writing {
				stuck = 0
			} else if stuck++; stuck == 10 {
				return
			}
		}
	}()
	_, err := p.Exec(short, "select length($1::text)", big)
	if err == nil {
		t.Fatal("the blocked statement succeeded")
	}
	t.Logf("the blocked caller: %v", err)
	// The cut connection's sleeper fails with it, at once; the other
	// sleeps on.
	select {
	case err := <-sleepers:
		if err == nil || !strings.Contains(err.Error(), "writing to a pipelined connection") {
			t.Fatalf("the sleeper on the cut connection: %v, want the failed write's error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no sleeping statement failed: the blocked write was not cut")
	}
	select {
	case err := <-sleepers:
		t.Fatalf("the other connection's statement ended too (%v): the cut reached beyond its connection", err)
	default:
	}
	// The pool goes on: the cut connection is replaced, and the next
	// statement goes to the new one, not behind the sleep on the other.
	var n int
	if err := p.QueryRow(ctx, "select $1::int", 7).Scan(&n); err != nil || n != 7 {
		t.Fatalf("after the cut: %d, %v", n, err)
	}
}

// A shared connection with nothing pending closes with a Terminate and
// waits for the server to end its backend, even while a writer is between
// its last write and its look at an empty queue (c.writing still set):
// with nothing pending, nothing more will be written. Without the wait the
// budget's permit could come back while the server still counts the
// backend.
func TestPipelineCloseTerminatesBesideAFinishingWriter(t *testing.T) {
	p := newPipelinedPool(t, 4, 8, nil)
	ctx := pgtest.Ctx(t)
	if _, err := p.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	cs := p.pipe.conns()
	if len(cs) == 0 {
		t.Fatal("no shared connection")
	}
	c := cs[0]
	pgtest.WaitFor(t, 5*time.Second, "nothing pending", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.pending) == 0 && !c.writing
	})
	pid := c.pc.conn.PgConn().PID()
	rec := &writeRecorder{Conn: c.nc}
	c.mu.Lock()
	c.nc = rec       // nobody writes now; the reader reads through c.fe
	c.writing = true // a writer about to find the queue empty
	c.mu.Unlock()
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	if got := rec.written(); !bytes.Equal(got, terminate) {
		t.Fatalf("close wrote %q, want Terminate %q", got, terminate)
	}
	var alive bool
	admin := pgtest.AdminConn(t)
	if err := admin.QueryRow(ctx, "select exists (select 1 from pg_stat_activity where pid = $1)", int32(pid)).Scan(&alive); err != nil {
		t.Fatal(err)
	}
	if alive {
		t.Fatalf("backend %d still at the server after close returned", pid)
	}
}

// writeRecorder keeps what is written through it, and counts the writes.
type writeRecorder struct {
	net.Conn
	mu  sync.Mutex
	buf []byte
	n   int
}

func (w *writeRecorder) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.buf = append(w.buf, b...)
	w.n++
	w.mu.Unlock()
	return w.Conn.Write(b)
}

func (w *writeRecorder) writes() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

func (w *writeRecorder) written() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]byte(nil), w.buf...)
}

// The reader writes the statements queued behind a busy server itself,
// and must not wait on that write: here the server streams a result larger
// than the sockets' buffers hold while the statements queued for it are
// larger still, so a reader that waited for its write to finish would stop
// taking the result, and the server, blocked on sending it, would never
// read the statements. What the socket does not take goes to the
// background writer, and every statement gets its answer.
func TestPipelineReaderNeverWaitsOnItsWrite(t *testing.T) {
	p := newPipelinedPool(t, 2, 16, nil)
	conn := oneSharedConn(t, p)
	ctx, cancel := context.WithTimeout(pgtest.Ctx(t), 60*time.Second)
	defer cancel()
	admin := pgtest.AdminConn(t)
	const lock = 7317
	if _, err := admin.Exec(ctx, "select pg_advisory_lock($1)", lock); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = admin.Exec(context.WithoutCancel(ctx), "select pg_advisory_unlock($1)", lock) }()
	counts := func() (pending, queued int) {
		conn.mu.Lock()
		defer conn.mu.Unlock()
		return len(conn.pending), len(conn.queue)
	}
	var wg sync.WaitGroup
	// Unprepared (QueryExecModeExec), so that no preparation joins the
	// requests counted below.
	exec := pgx.QueryExecModeExec
	wg.Go(func() {
		var got int
		if err := p.QueryRow(ctx, "select $1::int from (select pg_advisory_xact_lock($2::bigint)) l", exec, 1, lock).Scan(&got); err != nil || got != 1 {
			t.Errorf("the waiting statement: %d, %v", got, err)
		}
	})
	pgtest.WaitFor(t, 5*time.Second, "the waiting statement in flight", func() bool { p, q := counts(); return p == 1 && q == 0 })
	const rows = 40000 // of 1000 bytes: 40 MB
	wg.Go(func() {
		r, err := p.Query(ctx, "select repeat('x', 1000) from generate_series(1, $1::int)", exec, rows)
		if err != nil {
			t.Errorf("the large result: %v", err)
			return
		}
		n := 0
		for r.Next() {
			n++
		}
		if err := r.Err(); err != nil || n != rows {
			t.Errorf("the large result: %d rows, %v", n, err)
		}
	})
	pgtest.WaitFor(t, 5*time.Second, "the large result's statement written", func() bool { p, q := counts(); return p == 2 && q == 0 })
	const big = 8 << 20 // three of them: 24 MB
	for i := range 3 {
		wg.Go(func() {
			var n int
			if err := p.QueryRow(ctx, "select length($1::text)", exec, strings.Repeat("y", big+i)).Scan(&n); err != nil || n != big+i {
				t.Errorf("large statement %d: %d, %v", i, n, err)
			}
		})
	}
	pgtest.WaitFor(t, 30*time.Second, "the large statements queued behind the two in hand", func() bool { _, q := counts(); return q == 3 })
	if _, err := admin.Exec(ctx, "select pg_advisory_unlock($1)", lock); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}
