package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// pipeTable creates a table for one test, named for this process so that
// runs side by side do not meet, and drops it at cleanup.
func pipeTable(t *testing.T, name, columns string) string {
	t.Helper()
	admin := pgtest.AdminConn(t)
	table := fmt.Sprintf("%s_%d", name, os.Getpid())
	ctx := pgtest.Ctx(t)
	if _, err := admin.Exec(ctx, fmt.Sprintf("drop table if exists %s; create table %s (%s)", table, table, columns)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "drop table if exists "+table) })
	return table
}

// Every answer reaches its own caller: 128 callers sharing at most 8
// connections (MaxConns), up to 16 statements on each, each query's value
// unique to its caller and round, with failing queries (an error during the
// statement, a unique violation, a deferred constraint that fails at the
// implicit commit, after CommandComplete) and callers who give up
// mid-flight mixed in. Both are seen to have happened: callers waiting on
// one connection together, and callers gone before the answer to a
// statement the server ran.
func TestPipelineAnswersToTheirCallers(t *testing.T) {
	p := newPipelinedPool(t, 8, 16, nil)
	uniq := pipeTable(t, "pipe_uniq", "id bigint primary key")
	deferred := pipeTable(t, "pipe_deferred", "id bigint, constraint pipe_deferred_u unique (id) deferrable initially deferred")
	gone := pipeTable(t, "pipe_gone", "id bigint")
	ctx := pgtest.Ctx(t)
	if _, err := p.Exec(ctx, "insert into "+uniq+" values (-1)"); err != nil {
		t.Fatal(err)
	}

	const callers, rounds = 128, 12
	var wrong, gaveUp, answered atomic.Int64
	var goneMu sync.Mutex
	var gaveUpOn []int64 // the values of the statements given up on
	stopLooking := make(chan struct{})
	var most, looks int
	looked := make(chan struct{})
	go func() {
		defer close(looked)
		most, looks = mostWaitingTogether(p, stopLooking)
	}()
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				v := int64(c*1000 + r)
				var err error
				var want string
				switch (c + r) % 6 {
				case 0, 1: // a value unique to this caller and round
					var got int64
					var s string
					err = p.QueryRow(ctx, "select $1::bigint * 2, 'v' || $1::bigint", v).Scan(&got, &s)
					if err == nil && (got != v*2 || s != fmt.Sprintf("v%d", v)) {
						t.Errorf("caller %d round %d got %d %q", c, r, got, s)
						wrong.Add(1)
					}
				case 2:
					_, err = p.Exec(ctx, "select 1 / ($1::bigint - $1::bigint)", v)
					want = "22012"
				case 3:
					_, err = p.Exec(ctx, "insert into "+uniq+" values (-1)")
					want = "23505"
				case 4:
					var tag pgconn.CommandTag
					tag, err = p.Exec(ctx, "insert into "+deferred+" values ($1), ($1)", v)
					if err == nil {
						t.Errorf("caller %d: deferred violation reported success: %s", c, tag)
					}
					want = "23505"
				case 5: // gives up mid-flight; the row says the server ran it
					gctx, cancel := context.WithTimeout(ctx, time.Duration(200+v%30*100)*time.Microsecond)
					var got int64
					err = p.QueryRow(gctx, "insert into "+gone+" select $1::bigint from pg_sleep(0.001) returning id", v).Scan(&got)
					cancel()
					if err == nil && got != v {
						t.Errorf("caller %d round %d gave up, got %d", c, r, got)
						wrong.Add(1)
					}
					if err != nil {
						if !errors.Is(err, context.DeadlineExceeded) {
							t.Errorf("caller %d gave up: %v", c, err)
						}
						gaveUp.Add(1)
						goneMu.Lock()
						gaveUpOn = append(gaveUpOn, v)
						goneMu.Unlock()
						err = nil
					}
				}
				if want != "" {
					var pgErr *pgconn.PgError
					if !errors.As(err, &pgErr) || pgErr.Code != want {
						t.Errorf("caller %d round %d: want SQLSTATE %s, got %v", c, r, want, err)
					}
				} else if err != nil {
					t.Errorf("caller %d round %d: %v", c, r, err)
				}
				answered.Add(1)
			}
		}()
	}
	wg.Wait()
	close(stopLooking)
	<-looked
	t.Logf("%d answered, %d gave up, %d wrong; at most %d callers waiting together on one connection, over %d looks",
		answered.Load(), gaveUp.Load(), wrong.Load(), most, looks)
	if most < 2 {
		t.Errorf("no two callers were seen waiting on one connection together: nothing was shared, and the test proves nothing")
	}
	var n int
	if err := p.QueryRow(ctx, "select count(*) from "+deferred).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the deferred table holds %d rows (%v): a failed commit kept its rows", n, err)
	}
	// Every stream comes back, the abandoned ones once their answers came.
	pgtest.WaitFor(t, 5*time.Second, "every shared stream released", func() bool {
		return p.pipe.core.Stats().Leases == 0
	})
	// Their statements all answered by now: those of callers who had gone
	// that the server ran were given up on mid-flight.
	var midFlight int
	if err := p.QueryRow(ctx, "select count(*) from "+gone+" where id = any($1)", gaveUpOn).Scan(&midFlight); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of the %d statements given up on ran at the server", midFlight, len(gaveUpOn))
	if midFlight == 0 {
		t.Errorf("no caller gave up on a statement the server ran: none gave up mid-flight, and the test proves nothing")
	}
	if shared, whole := p.pipe.core.Stats().TotalConns, p.core.Stats().TotalConns; shared+whole > 8 {
		t.Fatalf("%d shared and %d whole connections, want at most 8 in all", shared, whole)
	}
}

// mostWaitingTogether looks at p's shared connections until stop closes,
// and returns the most callers it saw waiting for answers on one of them
// at once (a preparation of the statement cache and a statement given up
// on not counted), and how many looks it took.
func mostWaitingTogether(p *Pool, stop <-chan struct{}) (most, looks int) {
	for {
		select {
		case <-stop:
			return most, looks
		default:
		}
		for _, c := range p.pipe.conns() {
			c.mu.Lock()
			n := 0
			for _, r := range c.pending {
				if r.onDone == nil && r.state.Load() == reqWaiting {
					n++
				}
			}
			c.mu.Unlock()
			most = max(most, n)
		}
		looks++
		time.Sleep(100 * time.Microsecond)
	}
}

// A caller reading its own long answer that gives up mid-read returns at
// once; the connection's goroutine goes on from the middle of the message
// the read was cut in, and the next callers on that connection get their
// own answers. The answer's last row waits at the server on an advisory
// lock the test holds, so that the caller must return while its answer is
// still coming: one that read to its end could not.
func TestPipelineGiveUpMidRead(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	ctx := pgtest.Ctx(t)
	var n int
	if err := p.QueryRow(ctx, "select 1").Scan(&n); err != nil {
		t.Fatal(err)
	}
	// One shared connection, so that the callers after a cut go behind
	// the abandoned answer still streaming in: a shared pool that could
	// open another would have them wait for it instead (Config.Avoid),
	// the cut statement having been at the server past PipelineFill.
	first := oneSharedConn(t, p)
	gate := newServerGate(t, 3)
	const rows = 2000
	long := fmt.Sprintf("select g, repeat('x', 200) from generate_series(1, %d) g where g < %d or %s", rows, rows, gate.cond())
	var late time.Duration
	cut := 0
	for round := range 20 {
		gate.close()
		deadline := time.Duration(1+round%5) * time.Millisecond
		gctx, cancel := context.WithTimeout(ctx, deadline)
		var err error
		var took time.Duration
		returnsBefore(t, "its answer's last row, which the test holds at the server", func() {
			start := time.Now()
			var rs pgx.Rows
			if rs, err = p.Query(gctx, long); err == nil {
				rs.Close()
			}
			took = time.Since(start)
		})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("round %d: %v, want context.DeadlineExceeded", round, err)
		}
		late = max(late, took-deadline)
		if pending, _ := queueCounts(first); pending > 0 {
			cut++ // its answer still coming: the caller gave up mid-flight
		}
		gate.open()
		for i := range 3 {
			var v int
			var s string
			if err := p.QueryRow(ctx, "select $1::int, repeat('y', $1::int)", round*10+i).Scan(&v, &s); err != nil || v != round*10+i || len(s) != v {
				t.Fatalf("round %d, the query after: %d %d, %v", round, v, len(s), err)
			}
		}
	}
	if now := p.pipe.conns(); !slices.Contains(now, first) {
		t.Fatalf("shared connection %p, then %v: want it kept", first, now)
	}
	if cut == 0 {
		t.Fatal("no statement was at the server when its caller gave up: the test proves nothing")
	}
	t.Logf("%d of 20 reads cut, their callers back at most %s past their deadlines", cut, late)
}
