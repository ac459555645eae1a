package shoalpgx

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// Callers whose answers were the last the connection had pending send their
// next statements together too: once every answer is in, the reader lets
// the callers it answered run before it stops reading, and what they send
// meanwhile leaves in one write. The test makes the order of events its
// own. With one P (GOMAXPROCS 1) the answered callers cannot run until the
// reader lets them; the reader starts only once the server has answered
// every first statement, so that it reads them all at once and is drained
// when it has handed them out; and its yield (yieldHook) returns once every
// caller has its second statement queued. Without that yield the reader
// stops, the first callers to run write their statements themselves, one
// write each until the cork holds the rest (3 writes for 6 when it was
// measured), and the hook never sees a drained connection.
func TestPipelineLastCallersAnsweredWriteTogether(t *testing.T) {
	p := newPipelinedPool(t, 2, 16, nil)
	const sql = "select $1::int"
	conn, rec := recordedConn(t, p, sql)
	ctx := pgtest.Ctx(t)
	admin := pgtest.AdminConn(t)
	pid := conn.pc.conn.PgConn().PID()
	const callers = 6

	var drainedYields, gathered atomic.Int32
	conn.mu.Lock()
	conn.yieldHook = func() {
		conn.mu.Lock()
		drained := len(conn.pending) == 0
		conn.mu.Unlock()
		if !drained || drainedYields.Add(1) != 1 {
			runtime.Gosched()
			return
		}
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); runtime.Gosched() {
			conn.mu.Lock()
			queued := len(conn.queue)
			conn.mu.Unlock()
			if queued == callers {
				break
			}
		}
		conn.mu.Lock()
		gathered.Store(int32(len(conn.queue)))
		conn.mu.Unlock()
	}
	// Nobody reads until the test wakes the reader: the callers, finding
	// the reading taken, do not read for themselves.
	conn.reader = readerLoop
	conn.mu.Unlock()
	woken := false
	wake := func() {
		if !woken {
			woken = true
			conn.wake <- struct{}{}
		}
	}
	defer wake() // on a failure too, so that the callers get their answers

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for i := range 2 {
				want := c*10 + i
				var got int
				if err := p.QueryRow(ctx, sql, want).Scan(&got); err != nil || got != want {
					t.Errorf("caller %d: %d, %v", c, got, err)
					return
				}
			}
		})
	}
	pgtest.WaitFor(t, 5*time.Second, "every first statement sent", func() bool {
		conn.mu.Lock()
		defer conn.mu.Unlock()
		return len(conn.pending) == callers
	})
	// Those the cork held back go out now, as the reader would have sent
	// them.
	conn.mu.Lock()
	if len(conn.queue) > 0 && !conn.writing {
		conn.writing = true
		conn.writeLocked(ctx) // returns with conn.mu released
	} else {
		conn.mu.Unlock()
	}
	pgtest.WaitFor(t, 5*time.Second, "every first statement written and answered", func() bool {
		conn.mu.Lock()
		written := len(conn.queue) == 0 && !conn.writing
		conn.mu.Unlock()
		var state string
		if err := admin.QueryRow(ctx, "select state from pg_stat_activity where pid = $1", int32(pid)).Scan(&state); err != nil {
			t.Fatal(err)
		}
		return written && state == "idle"
	})
	before := rec.writes()
	wake()
	wg.Wait()

	if drainedYields.Load() == 0 {
		t.Fatal("the reader never yielded with every answer in: the callers it answered last were not let run before it stopped")
	}
	if g := gathered.Load(); g != callers {
		t.Fatalf("%d of %d second statements queued during the reader's yield", g, callers)
	}
	if w := rec.writes() - before; w != 1 {
		t.Fatalf("%d writes for the %d second statements, want one", w, callers)
	}
}

// A statement sent while readLoop lets the callers it answered last run,
// with every answer in, is read by its own caller, as a lone caller's
// statement is, rather than by readLoop: a caller that found readLoop
// reading does not keep it reading when the callers thin out to one. The
// test makes readLoop the reader of a first statement, and from its yield
// once that is answered (yieldHook) sends a second from another goroutine
// and waits for that caller to take the reading. Before readLoop gave the
// reading up at that yield, the second caller left its answer to readLoop,
// and so did the one after it, and so on for as long as each sent during
// the yield that followed.
func TestPipelineStatementSentAsTheReaderStopsIsReadByItsCaller(t *testing.T) {
	p := newPipelinedPool(t, 2, 16, nil)
	conn := oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	const sql = "select $1::int"
	run := func(want int) error {
		var got int
		if err := p.QueryRow(ctx, sql, want).Scan(&got); err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("got %d, want %d", got, want)
		}
		return nil
	}
	if err := run(0); err != nil { // prepared, so that each statement is one request
		t.Fatal(err)
	}

	second := make(chan error, 1)
	var took atomic.Bool
	hooked := false
	conn.mu.Lock()
	conn.yieldHook = func() {
		conn.mu.Lock()
		drained := len(conn.pending) == 0
		conn.mu.Unlock()
		if !drained || hooked {
			runtime.Gosched()
			return
		}
		hooked = true
		go func() { second <- run(2) }()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); runtime.Gosched() {
			conn.mu.Lock()
			reader := conn.reader
			conn.mu.Unlock()
			if reader == readerCaller {
				took.Store(true)
				return
			}
		}
	}
	// Nobody reads until the test wakes readLoop: the first caller, finding
	// the reading taken, leaves it to readLoop.
	conn.reader = readerLoop
	conn.mu.Unlock()
	first := make(chan error, 1)
	go func() { first <- run(1) }()
	pgtest.WaitFor(t, 5*time.Second, "the first statement written", func() bool {
		conn.mu.Lock()
		defer conn.mu.Unlock()
		return len(conn.pending) == 1 && len(conn.queue) == 0 && !conn.writing
	})
	conn.wake <- struct{}{}
	if err := <-first; err != nil {
		t.Fatalf("first statement: %v", err)
	}
	if err := <-second; err != nil {
		t.Fatalf("second statement: %v", err)
	}
	if !hooked {
		t.Fatal("readLoop never yielded with every answer in")
	}
	if !took.Load() {
		t.Fatal("the statement sent during readLoop's last yield left its reading to readLoop: its caller did not read its own answer")
	}
}
