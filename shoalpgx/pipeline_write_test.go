package shoalpgx

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// writeRig is a pipelined pool on one shared connection, plain or over
// TLS, for the write tests: the connection, and a look at how many of its
// requests are pending and queued and whether one is being written.
func writeRig(t *testing.T, overTLS bool) (*Pool, *pipeConn, func() (pending, queued int, writing bool)) {
	t.Helper()
	p := newPipelinedPool(t, 2, 8, func(c *Config) {
		if overTLS {
			// Debian's self-signed certificate: encryption is what is
			// tested.
			c.ConnConfig.TLSConfig = &tls.Config{InsecureSkipVerify: true}
			c.ConnConfig.Fallbacks = nil
		}
	})
	conn := oneSharedConn(t, p)
	return p, conn, func() (int, int, bool) {
		conn.mu.Lock()
		defer conn.mu.Unlock()
		return len(conn.pending), len(conn.queue), conn.writing
	}
}

// A caller whose statement cannot be written, because the backend waits
// on a lock and reads nothing, returns when its context ends, not when the
// backend reads again. On a plain socket the rest of its write goes out in
// the background once the backend reads, and every other statement on the
// connection, the one ahead of it and one queued behind it while it
// wrote, gets its answer. Over TLS a write cut short cannot be finished:
// the connection breaks, fails the statement written on it, and is
// replaced, and the statement queued behind, never written, goes to the
// new connection.
func TestPipelineBlockedWriteReturnsWithItsContext(t *testing.T) {
	for _, tc := range []struct {
		name string
		tls  bool
	}{{"plain", false}, {"TLS", true}} {
		t.Run(tc.name, func(t *testing.T) {
			p, conn, counts := writeRig(t, tc.tls)
			// Encoding the large statement below can take seconds on a
			// busy machine under -race: the bounds are wide.
			ctx, cancelAll := context.WithTimeout(pgtest.Ctx(t), 120*time.Second)
			defer cancelAll()
			admin := pgtest.AdminConn(t)
			const lock = 7318
			if _, err := admin.Exec(ctx, "select pg_advisory_lock($1)", lock); err != nil {
				t.Fatal(err)
			}
			unlocked := false
			unlock := func() {
				if !unlocked {
					unlocked = true
					if _, err := admin.Exec(context.WithoutCancel(ctx), "select pg_advisory_unlock($1)", lock); err != nil {
						t.Error(err)
					}
				}
			}
			defer unlock()
			exec := pgx.QueryExecModeExec // no preparation joins the requests counted
			waiter := make(chan error, 1)
			go func() {
				var got int
				err := p.QueryRow(ctx, "select $1::int from (select pg_advisory_xact_lock($2::bigint)) l", exec, 1, lock).Scan(&got)
				if err == nil && got != 1 {
					err = fmt.Errorf("got %d, want 1", got)
				}
				waiter <- err
			}()
			pgtest.WaitFor(t, 5*time.Second, "the waiting statement in flight", func() bool { p, q, _ := counts(); return p == 1 && q == 0 })

			// 64 MB, more than loopback's socket buffers hold on either
			// side. Once the write is under way and stuck (a writer at
			// work for 100ms), a statement queues behind it, and then
			// the caller's context ends.
			big := strings.Repeat("x", 64<<20)
			short, cancel := context.WithCancel(ctx)
			defer cancel()
			behind := make(chan error, 1)
			go func() {
				defer cancel()
				stuck := 0
				for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && short.Err() == nil; time.Sleep(10 * time.Millisecond) {
					if p, _, w := counts(); !w || p < 2 {
						stuck = 0
					} else if stuck++; stuck == 10 {
						break
					}
				}
				go func() {
					var got int
					err := p.QueryRow(ctx, "select $1::int", exec, 2).Scan(&got)
					if err == nil && got != 2 {
						err = fmt.Errorf("got %d, want 2", got)
					}
					behind <- err
				}()
				for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
					if _, q, _ := counts(); q == 1 {
						break // queued behind the blocked write
					}
				}
			}()
			_, err := p.Exec(short, "select length($1::text)", exec, big)
			cutErr := "writing to a pipelined connection"
			if !errors.Is(err, context.Canceled) && (!tc.tls || err == nil || !strings.Contains(err.Error(), cutErr)) {
				t.Fatalf("the blocked caller: %v, want its context's error", err)
			}
			if !tc.tls {
				select {
				case err := <-waiter:
					t.Fatalf("the statement ahead of the cut write ended (%v) before its lock was free", err)
				default:
				}
				unlock()
				for name, ch := range map[string]chan error{"ahead of the cut write": waiter, "queued behind it": behind} {
					if err := <-ch; err != nil {
						t.Errorf("the statement %s: %v", name, err)
					}
				}
				// The cut statement runs too once written, and its
				// answer is read and dropped: nothing is left pending.
				pgtest.WaitFor(t, 30*time.Second, "every answer read", func() bool { p, q, _ := counts(); return p == 0 && q == 0 })
				if err := conn.broken(); err != nil {
					t.Fatalf("the connection broke: %v", err)
				}
			} else {
				select {
				case err := <-waiter:
					if err == nil || !strings.Contains(err.Error(), cutErr) {
						t.Errorf("the statement ahead of the cut write: %v, want the cut write's error", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the statement ahead of the cut write did not fail with the connection")
				}
				// Never written, it goes to the connection that
				// replaces the broken one.
				if err := <-behind; err != nil {
					t.Errorf("the statement queued behind the cut write: %v", err)
				}
				unlock()
			}
			// The pool goes on, on the same connection or a new one.
			var n int
			if err := p.QueryRow(ctx, "select $1::int", 7).Scan(&n); err != nil || n != 7 {
				t.Fatalf("after the cut: %d, %v", n, err)
			}
		})
	}
}

// Over TLS, where a write cut short breaks the connection, a caller writes
// the batch that holds its own statement and leaves what others queued
// meanwhile to the background writer: its context ending while another's
// statement is being written fails nobody else. (On a plain socket a cut
// write is finished in the background; TestPipelineBlockedWriteReturnsWithItsContext.)
// Here the caller's statement makes its backend wait on a lock once it
// has it, so that the next statement's write blocks, and then the caller
// gives up.
func TestPipelineTLSWriterLeavesOthersToTheBackground(t *testing.T) {
	p, _, counts := writeRig(t, true)
	ctx, cancelAll := context.WithTimeout(pgtest.Ctx(t), 120*time.Second)
	defer cancelAll()
	admin := pgtest.AdminConn(t)
	const first, second = 7319, 7320
	for _, l := range []int{first, second} {
		if _, err := admin.Exec(ctx, "select pg_advisory_lock($1)", l); err != nil {
			t.Fatal(err)
		}
		defer func() { _, _ = admin.Exec(context.WithoutCancel(ctx), "select pg_advisory_unlock($1)", l) }()
	}
	exec := pgx.QueryExecModeExec
	// The backend waits on the first lock: the caller's write
	// blocks, and the other statement queues behind it.
	waiter := make(chan error, 1)
	go func() {
		_, err := p.Exec(ctx, "select pg_advisory_xact_lock($1::bigint)", exec, first)
		waiter <- err
	}()
	pgtest.WaitFor(t, 5*time.Second, "the waiting statement in flight", func() bool { p, q, _ := counts(); return p == 1 && q == 0 })
	mine, cancel := context.WithCancel(ctx)
	defer cancel()
	caller := make(chan error, 1)
	go func() {
		// Once read whole, it waits on the second lock.
		_, err := p.Exec(mine, "select length($1::text) from (select pg_advisory_xact_lock($2::bigint)) l", exec, strings.Repeat("x", 64<<20), second)
		caller <- err
	}()
	pgtest.WaitFor(t, 60*time.Second, "the caller's write blocked", func() bool { p, _, w := counts(); return p == 2 && w })
	other := make(chan error, 1)
	go func() {
		var n int
		err := p.QueryRow(ctx, "select length($1::text)", exec, strings.Repeat("y", 64<<20)).Scan(&n)
		if err == nil && n != 64<<20 {
			err = fmt.Errorf("got %d", n)
		}
		other <- err
	}()
	pgtest.WaitFor(t, 60*time.Second, "the other statement queued", func() bool { _, q, _ := counts(); return q == 1 })
	// The first lock let go: the backend reads the caller's
	// statement whole and waits on the second, so the other
	// statement's write, taken from the queue, blocks.
	if _, err := admin.Exec(ctx, "select pg_advisory_unlock($1)", first); err != nil {
		t.Fatal(err)
	}
	if err := <-waiter; err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, 60*time.Second, "the other statement's write under way", func() bool { p, q, w := counts(); return p == 2 && q == 0 && w })
	cancel()
	if err := <-caller; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller: %v, want its context's error", err)
	}
	if _, err := admin.Exec(ctx, "select pg_advisory_unlock($1)", second); err != nil {
		t.Fatal(err)
	}
	if err := <-other; err != nil {
		t.Fatalf("the statement written after the caller's: %v", err)
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
	counts := func() (pending, queued int) { return queueCounts(conn) }
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
