package shoalpgx

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// While the server has pipeCorkAt requests of a connection in hand, new
// ones wait in the queue, and the reader, once it has read the answer that
// brings it below, writes them all out in one write; every caller still
// gets its own answer. The first statement waits for an advisory lock the
// test holds, so the server answers nothing until the counts are checked.
func TestPipelineCorksWritesWhileTheServerIsBusy(t *testing.T) {
	p := newPipelinedPool(t, 2, 16, nil)
	conn := oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	const lock = 7316
	unlock := holdAdvisoryLock(t, lock)
	counts := func() (pending, queued int) { return queueCounts(conn) }
	var wg sync.WaitGroup
	run := func(sql string, args ...any) {
		want := args[0].(int)
		wg.Go(func() {
			var got int
			if err := p.QueryRow(ctx, sql, args...).Scan(&got); err != nil || got != want {
				t.Errorf("%s with %d: %d, %v", sql, want, got, err)
			}
		})
	}
	run("select $1::int from (select pg_advisory_xact_lock($2::bigint)) l", 1000, lock)
	// Alone in hand: its preparation, written before it, answered. Until
	// then the preparation counts as in hand too, and what follows would
	// be corked behind the two and written out with the preparation's
	// answer, before the counts below could see it queued.
	pgtest.WaitFor(t, 5*time.Second, "the waiting statement alone in flight", func() bool { p, q := counts(); return p == 1 && q == 0 })
	// The second in hand, written at once (with the preparation its
	// statement needs the first time, a request of its own).
	run("select $1::int", 1001)
	var inHand int
	pgtest.WaitFor(t, 5*time.Second, "the second statement written", func() bool {
		p, q := counts()
		inHand = p
		return p >= 2 && q == 0
	})
	const corked = 10
	for i := range corked {
		run("select $1::int", i)
	}
	pgtest.WaitFor(t, 5*time.Second, "the rest queued behind the two", func() bool { _, q := counts(); return q == corked })
	if pending, queued := counts(); pending != inHand+corked || queued != corked {
		t.Fatalf("%d pending and %d queued while the server waits, want %d and %d", pending, queued, inHand+corked, corked)
	}
	unlock()
	wg.Wait()
	if pending, queued := counts(); pending != 0 || queued != 0 {
		t.Fatalf("%d pending and %d queued after every answer, want none", pending, queued)
	}
}

// A request sent while the reader is between answers, with none in the
// server's hands, waits for the reader, which writes it out with every
// other request sent meanwhile in one write once it goes back to the
// socket: callers just answered send their next requests at once, and
// those leave together, not in one write each.
func TestPipelineRequestsSentBetweenAnswersLeaveInOneWrite(t *testing.T) {
	p := newPipelinedPool(t, 2, 16, nil)
	const sql = "select $1::int"
	conn, rec := recordedConn(t, p, sql)
	ctx := pgtest.Ctx(t)
	conn.mu.Lock()
	conn.reader = readerLoop // letting the callers it answered run
	conn.between = true
	conn.mu.Unlock()
	// The reader goes on, as readLoop's does once it has yielded; on a
	// failure too, so that the callers get their answers and the pool
	// closes.
	var resume sync.Once
	goOn := func() {
		resume.Do(func() {
			conn.mu.Lock()
			conn.between = false
			conn.flushLocked()
			conn.mu.Unlock()
			conn.wake <- struct{}{}
		})
	}
	defer goOn()
	const callers = 5
	var wg sync.WaitGroup
	for i := 1; i <= callers; i++ {
		wg.Go(func() {
			var got int
			if err := p.QueryRow(ctx, sql, i).Scan(&got); err != nil || got != i {
				t.Errorf("caller %d: %d, %v", i, got, err)
			}
		})
	}
	pgtest.WaitFor(t, 5*time.Second, "every request queued", func() bool {
		conn.mu.Lock()
		defer conn.mu.Unlock()
		return len(conn.queue) == callers
	})
	if w := rec.writes(); w != 0 {
		t.Errorf("%d writes while the reader was between answers, want none before it goes back to the socket", w)
	}
	goOn()
	wg.Wait()
	if w := rec.writes(); w != 1 {
		t.Fatalf("%d writes for %d requests sent between answers, want one", w, callers)
	}
}

// recordedConn holds p's shared connections to one and returns it, with
// sql prepared on it, so that each statement of sql is one request, once
// it is quiet, its writes going through the recorder it returns: the
// reader still reads through conn.fe, and everyone writes through conn.nc.
func recordedConn(t *testing.T, p *Pool, sql string) (*pipeConn, *writeRecorder) {
	t.Helper()
	conn := oneSharedConn(t, p)
	var n int
	if err := p.QueryRow(pgtest.Ctx(t), sql, 0).Scan(&n); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, 5*time.Second, "the connection quiet", func() bool {
		conn.mu.Lock()
		defer conn.mu.Unlock()
		return len(conn.pending) == 0 && !conn.writing && conn.reader == readerNone
	})
	rec := &writeRecorder{Conn: conn.nc}
	conn.mu.Lock()
	conn.nc = rec
	conn.raw = nil
	conn.mu.Unlock()
	return conn, rec
}

// holdAdvisoryLock takes the advisory lock on an admin connection, so that a
// statement that waits for it holds its connection up until the test calls
// the unlock it returns; a second call does nothing, and cleanup calls it
// too, before the test's pool closes.
func holdAdvisoryLock(t *testing.T, lock int64) (unlock func()) {
	t.Helper()
	ctx := pgtest.Ctx(t)
	admin := pgtest.AdminConn(t)
	if _, err := admin.Exec(ctx, "select pg_advisory_lock($1)", lock); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	unlock = func() {
		once.Do(func() {
			if _, err := admin.Exec(ctx, "select pg_advisory_unlock($1)", lock); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(unlock)
	return unlock
}

// queueCounts returns how many requests c holds unanswered, written or
// not, and how many of those wait in its queue, unwritten.
func queueCounts(c *pipeConn) (pending, queued int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending), len(c.queue)
}

// oneSharedConn holds p's shared connections to one, and returns it once
// it is open.
func oneSharedConn(t *testing.T, p *Pool) *pipeConn {
	t.Helper()
	if err := p.pipe.core.SetMaxConns(1); err != nil {
		t.Fatal(err)
	}
	var conn *pipeConn
	pgtest.WaitFor(t, 5*time.Second, "one shared connection", func() bool {
		cs := p.pipe.conns()
		if len(cs) == 1 {
			conn = cs[0]
		}
		return len(cs) == 1
	})
	return conn
}

// Callers answered together send their next statements together: before
// the reader waits for more answers it lets the callers it has just
// answered run, and what they send meanwhile waits in the queue for the
// reader's next write (that those leave in one write is
// TestPipelineRequestsSentBetweenAnswersLeaveInOneWrite's). Five callers
// each run twenty statements on one shared connection. The test takes the
// reader's yields over (yieldHook): from the yield before a wait, with
// statements still pending, it returns only once every caller still
// running has a statement queued or in flight, so that how the scheduler
// happens to run them does not decide whether they send during it.
// Without that yield the hook sees none, and the test fails. (The write
// counts vary with the scheduler, so they are logged, not checked: the
// same load made 40-63 writes without the reader's yields and 25-39 with
// them.)
func TestPipelineCallersAnsweredTogetherWriteTogether(t *testing.T) {
	p := newPipelinedPool(t, 2, 16, nil)
	const sql = "select $1::int"
	conn, rec := recordedConn(t, p, sql)
	ctx := pgtest.Ctx(t)
	const callers, each = 5, 20
	var done, yields, sentDuring atomic.Int32
	conn.mu.Lock()
	conn.yieldHook = func() {
		conn.mu.Lock()
		before, drained := len(conn.queue), len(conn.pending) == 0
		conn.mu.Unlock()
		if drained {
			// readLoop's yield once every answer is in: left to the
			// scheduler, so that it cannot stand in for the yield
			// before a wait, which is what is counted.
			runtime.Gosched()
			return
		}
		yields.Add(1)
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); runtime.Gosched() {
			conn.mu.Lock()
			ready := len(conn.pending) >= callers-int(done.Load())
			queued := len(conn.queue)
			conn.mu.Unlock()
			if ready {
				sentDuring.Add(int32(queued - before))
				return
			}
		}
		t.Error("the callers the reader answered sent nothing within 2s of its yield")
	}
	conn.mu.Unlock()

	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			defer done.Add(1)
			for i := range each {
				want := c*1000 + i
				var got int
				if err := p.QueryRow(ctx, sql, want).Scan(&got); err != nil || got != want {
					t.Errorf("caller %d: %d, %v", c, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
	w := rec.writes()
	t.Logf("%d writes for %d statements; %d yields, %d statements sent during them", w, callers*each, yields.Load(), sentDuring.Load())
	if yields.Load() == 0 || sentDuring.Load() == 0 {
		t.Fatalf("%d yields, %d statements sent during them: the reader never let the callers it answered send before it waited", yields.Load(), sentDuring.Load())
	}
}
