package shoalpgx

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// paceOn runs sql three times as a lone caller, so that the shared
// connection it keeps to has measured its pace, and returns that
// connection's backend PID.
func paceOn(t *testing.T, p *Pool, sql string) uint32 {
	t.Helper()
	ctx := pgtest.Ctx(t)
	var pid uint32
	for range 3 {
		if err := p.QueryRow(ctx, sql).Scan(&pid); err != nil {
			t.Fatal(err)
		}
	}
	return pid
}

// backendsTogether runs sql, which selects pg_backend_pid(), by n callers
// released together, and counts the statements each backend ran.
func backendsTogether(t *testing.T, p *Pool, sql string, n int) map[uint32]int {
	t.Helper()
	ctx := pgtest.Ctx(t)
	start := make(chan struct{})
	var mu sync.Mutex
	pids := map[uint32]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			<-start
			var pid uint32
			if err := p.QueryRow(ctx, sql).Scan(&pid); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			pids[pid]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return pids
}

// sharedByPID returns the shared connection of backend pid.
func sharedByPID(t *testing.T, p *Pool, pid uint32) *pipeConn {
	t.Helper()
	for _, c := range p.pipe.conns() {
		if c.pc.conn.PgConn().PID() == pid {
			return c
		}
	}
	t.Fatalf("no shared connection of backend %d", pid)
	return nil
}

// Callers arriving together, more of them than connections open, share
// the connection that answers them within PipelineFill, though the pool
// could spread them: of six statements of 50ms each, whose pace the
// connection has measured, on two connections, at least four run on one
// backend (the first two callers may take a connection each; see
// TestPipelineFillLeavesEachCallerAConnectionWhileTheyLast). With
// PipelineFill 0 they spread, least-loaded first: three at most on one.
func TestPipelineFillSharesBeforeSpreading(t *testing.T) {
	const sql = "select pg_backend_pid() from pg_sleep(0.05)"
	run := func(t *testing.T, fill time.Duration) (most int, pids map[uint32]int) {
		p := newPipelinedPool(t, 8, 16, func(c *Config) { c.PipelineFill = fill })
		paceOn(t, p, sql)
		pgtest.WaitFor(t, 5*time.Second, "two shared connections open", func() bool { return len(p.pipe.conns()) >= 2 })
		pids = backendsTogether(t, p, sql, 6)
		for _, n := range pids {
			most = max(most, n)
		}
		return most, pids
	}
	t.Run("fill", func(t *testing.T) {
		if most, pids := run(t, 10*time.Second); most < 4 {
			t.Fatalf("six statements together ran on backends %v, want four or more on one: the connection answers them within PipelineFill", pids)
		}
	})
	t.Run("spread", func(t *testing.T) {
		if most, pids := run(t, 0); most > 3 {
			t.Fatalf("six statements together ran on backends %v with PipelineFill 0, want them spread, three at most on one", pids)
		}
	})
}

// A connection held up by a slow statement, at the server for longer than
// PipelineFill, takes no new statement, though its pace would let it fill:
// the quick one goes to another connection, and is not held up.
func TestPipelineFillAvoidsAStalledConnection(t *testing.T) {
	const fill = 50 * time.Millisecond
	p := newPipelinedPool(t, 4, 16, func(c *Config) { c.PipelineFill = fill })
	ctx := pgtest.Ctx(t)
	pid := paceOn(t, p, "select pg_backend_pid()")
	c := sharedByPID(t, p, pid)
	pgtest.WaitFor(t, 5*time.Second, "two shared connections open", func() bool { return len(p.pipe.conns()) >= 2 })
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		var got uint32
		if err := p.QueryRow(ctx, "select pg_backend_pid() from pg_sleep(2)").Scan(&got); err != nil {
			t.Errorf("the slow statement: %v", err)
		} else if got != pid {
			t.Errorf("the slow statement ran on backend %d, want the lone caller's %d", got, pid)
		}
	}()
	if each := c.pace.each.Load(); 2*each > int64(fill) {
		t.Fatalf("the connection's pace is %v a statement: it would not fill, and the test would prove nothing", time.Duration(each))
	}
	pgtest.WaitFor(t, 5*time.Second, "the slow statement at the server past PipelineFill", func() bool {
		return c.pace.atServer.Load() > 0 && pipeClock()-c.pace.turnAt.Load() > int64(fill)
	})
	var got uint32
	if err := p.QueryRow(ctx, "select pg_backend_pid()").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got == pid {
		t.Fatal("a quick statement went to the connection held up by a slow one")
	}
	select {
	case <-slowDone:
		t.Fatal("the slow statement ended before the quick one: the test proves nothing")
	default:
	}
	<-slowDone
}

// A connection held up by a slow statement is passed over by new
// statements while another has room, even when it carries the fewest:
// here PipelineFill accepts no connection (the quick statements' pace
// times two passes it), so every statement goes to the least-loaded
// one, which the stalled connection would be half the time. The quick
// statements take 200ms, a third less than PipelineFill, so that a
// loaded machine's delays do not make their connection look held up too.
func TestPipelineNewStatementsPassOverAStalledConnection(t *testing.T) {
	const fill = 300 * time.Millisecond
	const quick = "select pg_backend_pid() from pg_sleep(0.2)"
	p := newPipelinedPool(t, 2, 16, func(c *Config) { c.PipelineFill = fill })
	ctx := pgtest.Ctx(t)
	pgtest.WaitFor(t, 10*time.Second, "two shared connections open", func() bool {
		backendsTogether(t, p, quick, 2)
		return len(p.pipe.conns()) == 2
	})
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		if _, err := p.Exec(ctx, "select pg_sleep(4)"); err != nil {
			t.Errorf("the slow statement: %v", err)
		}
	}()
	var stalled *pipeConn
	pgtest.WaitFor(t, 5*time.Second, "a connection held up past PipelineFill", func() bool {
		for _, c := range p.pipe.conns() {
			if p.pipe.stalled(c) {
				stalled = c
				return true
			}
		}
		return false
	})
	slowPID := stalled.pc.conn.PgConn().PID()
	var mu sync.Mutex
	var pids []uint32
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for range 2 {
				var pid uint32
				if err := p.QueryRow(ctx, quick).Scan(&pid); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				pids = append(pids, pid)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, pid := range pids {
		if pid == slowPID {
			t.Fatalf("a quick statement ran behind the slow one on backend %d (backends %v)", slowPID, pids)
		}
	}
	select {
	case <-slowDone:
		t.Fatal("the slow statement ended before the quick ones: the test proves nothing")
	default:
	}
	<-slowDone
}

// With no more callers than shared connections open, each caller's
// statement goes to a connection of its own, however much PipelineFill
// would let one connection take: filled in behind another, it would only
// wait for it while the other backend sat idle.
func TestPipelineFillLeavesEachCallerAConnectionWhileTheyLast(t *testing.T) {
	const sql = "select pg_backend_pid() from pg_sleep(0.05)"
	p := newPipelinedPool(t, 8, 16, func(c *Config) { c.PipelineFill = 10 * time.Second })
	paceOn(t, p, sql)
	pgtest.WaitFor(t, 5*time.Second, "two shared connections open", func() bool { return len(p.pipe.conns()) >= 2 })
	if n := len(p.pipe.conns()); n != 2 {
		t.Fatalf("%d shared connections open, want the pool's floor of 2", n)
	}
	if pids := backendsTogether(t, p, sql, 2); len(pids) != 2 {
		t.Fatalf("two callers' statements ran on backends %v, want one each: two connections were open", pids)
	}
}

// waitAllHeldUp waits until p has n shared connections open, each held up
// by a statement at the server past PipelineFill.
func waitAllHeldUp(t *testing.T, p *Pool, n int) {
	t.Helper()
	pgtest.WaitFor(t, 5*time.Second, "every shared connection held up", func() bool {
		cs := p.pipe.conns()
		for _, c := range cs {
			if !p.pipe.stalled(c) {
				return false
			}
		}
		return len(cs) == n
	})
}

// A statement that finds every open shared connection held up by a slow
// statement, while the pool may open another, goes to the connection the
// pool opens, rather than behind a slow one. The slow statements wait on a
// lock the test holds until the quick one is answered: one that went
// behind them would never be.
func TestPipelineHeldUpConnectionsLeaveTheStatementToANewOne(t *testing.T) {
	p := newPipelinedPool(t, 4, 8, nil) // two shared connections, room for more
	ctx := pgtest.Ctx(t)
	pgtest.WaitFor(t, 5*time.Second, "both shared connections open", func() bool { return len(p.pipe.conns()) == 2 })
	const lock = 7323
	unlock := holdAdvisoryLock(t, lock)
	slow := make(chan uint32, 2)
	for range 2 {
		go func() {
			var pid uint32
			if err := p.QueryRow(ctx, "select pg_backend_pid() from (select pg_advisory_xact_lock($1::bigint)) l", lock).Scan(&pid); err != nil {
				t.Errorf("a slow statement: %v", err)
			}
			slow <- pid
		}()
	}
	waitAllHeldUp(t, p, 2)
	qctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var pid uint32
	if err := p.QueryRow(qctx, "select pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatalf("the quick statement, while the slow ones wait: %v", err)
	}
	unlock()
	if a, b := <-slow, <-slow; pid == a || pid == b {
		t.Fatalf("the quick statement ran on backend %d, behind a slow one (%d, %d)", pid, a, b)
	}
}
