package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgpair"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// pipeWrite is one write a failover test sent, and what its caller heard.
type pipeWrite struct {
	id   int
	port int // the server's, when it answered ok
	err  error
}

// definite reports whether err says the statement did nothing: the
// server's own refusal of it (a read-only refusal, a duplicate key), or
// no connection to send it on. An error of the connection, or of the
// session's end (class 57P, 08), leaves the outcome open.
func definite(err error) bool {
	var ae *shoal.AcquireError
	if errors.As(err, &ae) {
		return true
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code[:2] {
	case "57", "08":
		return false
	}
	return true
}

// failoverWriters runs writers on pool until stop is closed, each write an
// INSERT of an id of its own through one of the pipelined calls (Exec,
// QueryRow, a batch), and returns what each caller heard.
func failoverWriters(pool *Pool, table string, writers int, stop <-chan struct{}, okOn func(port int)) func() []pipeWrite {
	var (
		mu  sync.Mutex
		out []pipeWrite
		wg  sync.WaitGroup
		ids atomic.Int64
	)
	for w := range writers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := int(ids.Add(1))
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				r := pipeWrite{id: id}
				sql := "INSERT INTO " + table + " VALUES ($1) RETURNING inet_server_port()"
				switch (w + i) % 3 {
				case 0:
					r.err = pool.QueryRow(ctx, sql, id).Scan(&r.port)
				case 1:
					var tag pgconn.CommandTag
					tag, r.err = pool.Exec(ctx, "INSERT INTO "+table+" VALUES ($1)", id)
					if r.err == nil && tag.RowsAffected() != 1 {
						r.err = fmt.Errorf("exec inserted %d rows", tag.RowsAffected())
					}
				case 2:
					b := &pgx.Batch{}
					b.Queue(sql, id).QueryRow(func(row pgx.Row) error { return row.Scan(&r.port) })
					r.err = pool.SendBatch(ctx, b).Close()
				}
				cancel()
				if r.err == nil && r.port != 0 {
					okOn(r.port)
				}
				mu.Lock()
				out = append(out, r)
				mu.Unlock()
				if r.err != nil {
					time.Sleep(10 * time.Millisecond) // no spin while no host qualifies
				}
			}
		})
	}
	return func() []pipeWrite {
		wg.Wait()
		return out
	}
}

// checkWrites checks what each caller heard against the rows the new
// primary has: every write reported ok is there, once; every write the
// server refused is not.
func checkWrites(t *testing.T, ctx context.Context, primary pgpair.Node, table string, writes []pipeWrite) {
	t.Helper()
	conn, err := pgx.Connect(ctx, primary.ConnString)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, "SELECT n FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		t.Fatal(err)
	}
	count := map[int]int{}
	for _, n := range have {
		count[int(n)]++
	}
	ok, failed, open := 0, 0, 0
	for _, w := range writes {
		switch {
		case count[w.id] > 1:
			t.Errorf("write %d is on the new primary %d times", w.id, count[w.id])
		case w.err == nil && count[w.id] == 0:
			t.Errorf("write %d was reported ok (port %d) and is not on the new primary", w.id, w.port)
		case w.err != nil && definite(w.err) && count[w.id] == 1:
			t.Errorf("write %d was reported failed (%v) and is on the new primary", w.id, w.err)
		}
		switch {
		case w.err == nil:
			ok++
		case definite(w.err):
			failed++
		default:
			open++
		}
	}
	t.Logf("%d writes: %d ok, %d refused, %d with their outcome open", len(writes), ok, failed, open)
}

// dialsSeen counts the pool's connections made, by the port they reached.
type dialsSeen struct {
	mu     sync.Mutex
	byPort map[uint16]int
}

// afterConnect is the pool's AfterConnect: it counts c.
func (d *dialsSeen) afterConnect(_ context.Context, c *pgx.Conn) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.byPort[c.Config().Port]++
	return nil
}

// to is how many connections were made to port.
func (d *dialsSeen) to(port string) int {
	n, _ := strconv.Atoi(port)
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.byPort[uint16(n)]
}

// Pipelined writes through a failover, the old primary fenced read-only or
// stopped and the standby promoted: no write reported ok is missing from
// the new primary, none the server refused (or never got) is there, and
// the writes move to the new primary. A refusal on a shared connection
// resets the whole connections too, as one on a whole connection does.
func TestPipelineFailoverWrites(t *testing.T) {
	for _, how := range []string{"fenced", "stopped"} {
		t.Run(how, func(t *testing.T) { pipelineFailoverWrites(t, how) })
	}
}

// pipelineFailoverWrites is TestPipelineFailoverWrites with the old
// primary fenced or stopped (how).
func pipelineFailoverWrites(t *testing.T, how string) {
	pair := pgpair.ForTest(t)
	ctx := pgtest.Ctx(t)
	cfg, err := ParseConfig(pair.HA)
	if err != nil {
		t.Fatal(err)
	}
	seen := &dialsSeen{byPort: map[uint16]int{}}
	cfg.MaxConns, cfg.Pipeline, cfg.RoleCheckPeriod = 4, 8, 0
	cfg.AfterConnect = seen.afterConnect
	pool := newPoolFor(t, cfg)
	table := fmt.Sprintf("shoalpgx_pipe_failover_%s", how)
	if _, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+table+"; CREATE TABLE "+table+" (n integer PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	var onOld, onNew atomic.Int64
	stop := make(chan struct{})
	wait := failoverWriters(pool, table, 8, stop, func(port int) {
		if strconv.Itoa(port) == pair.Standby.Port {
			onNew.Add(1)
		} else {
			onOld.Add(1)
		}
	})
	pgtest.WaitFor(t, 10*time.Second, "writes on the primary", func() bool { return onOld.Load() >= 50 })
	// Fenced, a whole connection idle on the old primary, which a refusal
	// on a shared connection closes too, the reset being the whole pool's.
	// Stopped, none: the shared ones end with the server, and the pool
	// moves with no connection left to reset.
	var idle uint32
	if how == "fenced" {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		idle = c.Conn().PgConn().PID()
		c.Release()
	}
	switch how {
	case "fenced":
		if err := pair.SetReadOnly(ctx, pair.Primary, true); err != nil {
			t.Fatal(err)
		}
		// Before the promotion nothing lands elsewhere, and the role
		// check is off: the reset is a refusal's, on a shared connection.
		pgtest.WaitFor(t, 5*time.Second, "a refused write resets the pool", func() bool { return pool.resets.Load() > 0 })
		if idlePIDs(pool)[idle] {
			t.Errorf("a refusal on a shared connection left the whole connection idle on the fenced primary (backend %d) open", idle)
		}
	case "stopped":
		if err := pair.Stop(ctx, pair.Primary, pgpair.Fast); err != nil {
			t.Fatal(err)
		}
	}
	if err := pair.Promote(ctx, pair.Standby); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, 20*time.Second, "writes on the new primary", func() bool { return onNew.Load() >= 100 })
	close(stop)
	writes := wait()
	checkWrites(t, ctx, pair.Standby, table, writes)
	open := 0
	for _, h := range pool.Hosts() {
		if h.Addr == pair.Standby.Addr {
			open = h.Open
		}
	}
	t.Logf("%d resets; %d connections made to the new primary, %d of them open now", pool.resets.Load(), seen.to(pair.Standby.Port), open)
}
