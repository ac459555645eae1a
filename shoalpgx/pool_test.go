package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

func TestExecQueryQueryRowCopyFromPing(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 2 })
	ctx := pgtest.Ctx(t)
	if err := p.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	table := pgx.Identifier{"shoalpgx_copy_test"}
	if _, err := p.Exec(ctx, "drop table if exists shoalpgx_copy_test; create table shoalpgx_copy_test (id int, name text)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = p.Exec(pgtest.Ctx(t), "drop table if exists shoalpgx_copy_test") })

	n, err := p.CopyFrom(ctx, table, []string{"id", "name"}, pgx.CopyFromRows([][]any{{1, "one"}, {2, "two"}, {3, "three"}}))
	if err != nil || n != 3 {
		t.Fatalf("CopyFrom = %d, %v; want 3, nil", n, err)
	}
	tag, err := p.Exec(ctx, "update shoalpgx_copy_test set name = upper(name) where id >= $1", 2)
	if err != nil || tag.RowsAffected() != 2 {
		t.Fatalf("Exec = %v, %v; want UPDATE 2", tag, err)
	}
	var name string
	if err := p.QueryRow(ctx, "select name from shoalpgx_copy_test where id = $1", 3).Scan(&name); err != nil || name != "THREE" {
		t.Fatalf("QueryRow = %q, %v", name, err)
	}
	rows, err := p.Query(ctx, "select id from shoalpgx_copy_test order by id")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil || len(ids) != 3 || ids[2] != 3 {
		t.Fatalf("Query = %v, %v", ids, err)
	}
	if err := p.QueryRow(ctx, "select name from shoalpgx_copy_test where id = 99").Scan(&name); !errors.Is(err, pgx.ErrNoRows) {
		t.Fatalf("QueryRow of nothing: err = %v, want pgx.ErrNoRows", err)
	}
	if s := p.Stat().Shoal(); s.InUseConns != 0 {
		t.Fatalf("after all the above %d connections are still in use", s.InUseConns)
	}
}

// inUse reports the pool's connections with a holder.
func inUse(p *Pool) int { return p.Stat().Shoal().InUseConns }

func TestQueryHoldsTheConnectionUntilRowsClose(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 2 })
	ctx := pgtest.Ctx(t)
	rows, err := p.Query(ctx, "select generate_series(1, 100)")
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	if n := inUse(p); n != 1 {
		t.Fatalf("with rows open %d connections in use, want 1", n)
	}
	rows.Close()
	rows.Close() // twice is fine
	if n := inUse(p); n != 0 {
		t.Fatalf("after rows.Close %d connections in use, want 0", n)
	}
	// Read to the end: Next's false releases.
	rows, err = p.Query(ctx, "select generate_series(1, 3)")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	if n := inUse(p); n != 0 || rows.Err() != nil {
		t.Fatalf("after reading to the end %d in use (err %v), want 0", n, rows.Err())
	}
	// An error in the query releases too.
	if _, err := p.Query(ctx, "select nonsense from nowhere"); err == nil {
		t.Fatal("bad query succeeded")
	}
	if n := inUse(p); n != 0 {
		t.Fatalf("after a failed query %d in use, want 0", n)
	}
}

func TestQueryRowHoldsTheConnectionUntilScan(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 2 })
	ctx := pgtest.Ctx(t)
	row := p.QueryRow(ctx, "select 42")
	if n := inUse(p); n != 1 {
		t.Fatalf("before Scan %d in use, want 1", n)
	}
	var v int
	if err := row.Scan(&v); err != nil || v != 42 {
		t.Fatalf("Scan = %d, %v", v, err)
	}
	if n := inUse(p); n != 0 {
		t.Fatalf("after Scan %d in use, want 0", n)
	}
	_ = row.Scan(&v) // a second Scan must not release anything again
	if n := inUse(p); n != 0 {
		t.Fatalf("after a second Scan %d in use, want 0", n)
	}
}

func TestBeginHoldsTheConnectionUntilCommitOrRollback(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 2 })
	ctx := pgtest.Ctx(t)
	for _, end := range []string{"commit", "rollback"} {
		tx, err := p.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
		if err != nil {
			t.Fatal(err)
		}
		var level string
		if err := tx.QueryRow(ctx, "show transaction_isolation").Scan(&level); err != nil || level != "serializable" {
			t.Fatalf("isolation = %q, %v", level, err)
		}
		if n := inUse(p); n != 1 {
			t.Fatalf("inside the transaction %d in use, want 1", n)
		}
		if end == "commit" {
			err = tx.Commit(ctx)
		} else {
			err = tx.Rollback(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		if n := inUse(p); n != 0 {
			t.Fatalf("after %s %d in use, want 0", end, n)
		}
		if err := tx.Rollback(ctx); !errors.Is(err, pgx.ErrTxClosed) {
			t.Fatalf("Rollback after %s: %v, want pgx.ErrTxClosed", end, err)
		}
		if n := inUse(p); n != 0 {
			t.Fatalf("after a second end %d in use, want 0", n)
		}
	}
}

func TestSendBatchHoldsTheConnectionUntilClose(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 2 })
	ctx := pgtest.Ctx(t)
	b := &pgx.Batch{}
	b.Queue("select 1")
	b.Queue("select 2")
	br := p.SendBatch(ctx, b)
	var v int
	if err := br.QueryRow().Scan(&v); err != nil || v != 1 {
		t.Fatalf("first = %d, %v", v, err)
	}
	if n := inUse(p); n != 1 {
		t.Fatalf("with the batch open %d in use, want 1", n)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	if n := inUse(p); n != 0 {
		t.Fatalf("after Close %d in use, want 0", n)
	}

	// A batch that begins a transaction hands the connection to it.
	b = &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	b.Queue("select 3")
	br = p.SendBatch(ctx, b)
	tx := br.Tx()
	if tx == nil {
		t.Fatal("batch with BeginTx has no Tx")
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	if n := inUse(p); n != 1 {
		t.Fatalf("with the batch's transaction open %d in use, want 1", n)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := inUse(p); n != 0 {
		t.Fatalf("after the batch's Commit %d in use, want 0", n)
	}

	// A batch whose BEGIN fails began no transaction: Close alone gives
	// the connection back, and a Rollback afterwards is harmless.
	b = &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{IsoLevel: "no such level"})
	b.Queue("select 4")
	br = p.SendBatch(ctx, b)
	tx = br.Tx()
	if err := br.Close(); err == nil {
		t.Fatal("a batch whose BEGIN is invalid closed without an error")
	}
	if n := inUse(p); n != 0 {
		_ = tx.Rollback(ctx) // so the pool can close and the test end
		t.Fatalf("after Close of a batch whose BEGIN failed %d in use, want 0", n)
	}
	if err := tx.Rollback(ctx); !errors.Is(err, pgx.ErrTxClosed) {
		t.Fatalf("Rollback of the transaction that never began = %v, want pgx.ErrTxClosed", err)
	}
	if n := inUse(p); n != 0 {
		t.Fatalf("after the Rollback %d in use, want 0", n)
	}
	var one int
	if err := p.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("the pool after the failed batch: %d, %v", one, err)
	}
}

func TestAcquireRelease(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 1 })
	ctx := pgtest.Ctx(t)
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid := backendPID(t, c)
	if _, err := c.Exec(ctx, "set application_name = 'still-here'"); err != nil {
		t.Fatal(err)
	}
	c.Release()
	c.Release() // twice is fine
	c2, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Release()
	if got := backendPID(t, c2); got != pid {
		t.Fatalf("clean release: next acquire got backend %d, want the same %d", got, pid)
	}
}

func TestHooks(t *testing.T) {
	var connects, afterConnects, beforeAcquires, afterReleases, beforeCloses int
	rejectNextAcquire := false
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 1
		c.BeforeConnect = func(_ context.Context, cc *pgx.ConnConfig) error {
			connects++
			cc.RuntimeParams["application_name"] = "from-before-connect"
			return nil
		}
		c.AfterConnect = func(context.Context, *pgx.Conn) error { afterConnects++; return nil }
		c.BeforeAcquire = func(context.Context, *pgx.Conn) bool {
			beforeAcquires++
			ok := !rejectNextAcquire
			rejectNextAcquire = false
			return ok
		}
		c.AfterRelease = func(*pgx.Conn) bool { afterReleases++; return afterReleases != 2 }
		c.BeforeClose = func(*pgx.Conn) { beforeCloses++ }
	})
	ctx := pgtest.Ctx(t)
	var app string
	if err := p.QueryRow(ctx, "show application_name").Scan(&app); err != nil || app != "from-before-connect" {
		t.Fatalf("application_name = %q, %v; BeforeConnect's change lost", app, err)
	}
	// Second release: AfterRelease says no, the connection closes.
	if err := p.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	// BeforeAcquire rejects the idle connection: it closes, a new one comes.
	rejectNextAcquire = true
	if err := p.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	got := []int{connects, afterConnects, afterReleases, beforeCloses}
	want := []int{3, 3, 3, 2}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("connects, afterConnects, afterReleases, beforeCloses = %v, want %v", got, want)
		}
	}
	if beforeAcquires < 1 {
		t.Fatal("BeforeAcquire never ran")
	}
}

// newBatch queues each statement in a new batch.
func newBatch(sqls ...string) *pgx.Batch {
	b := &pgx.Batch{}
	for _, s := range sqls {
		b.Queue(s)
	}
	return b
}

func TestAcquireFuncAndHijack(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 1 })
	ctx := pgtest.Ctx(t)
	var pid uint32
	if err := p.AcquireFunc(ctx, func(c *Conn) error { pid = backendPID(t, c); return nil }); err != nil {
		t.Fatal(err)
	}
	if n := inUse(p); n != 0 {
		t.Fatalf("after AcquireFunc %d in use, want 0", n)
	}
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn := c.Hijack()
	defer conn.Close(ctx)
	if conn.PgConn().PID() != pid || conn.IsClosed() {
		t.Fatal("Hijack did not return the pool's open connection")
	}
	// The pool forgot it: its one place is free for a new connection,
	// while the hijacked one stays open.
	c2, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Release()
	if backendPID(t, c2) == pid {
		t.Fatal("the pool handed out a hijacked connection")
	}
	if err := conn.Ping(ctx); err != nil {
		t.Fatalf("the pool closed a hijacked connection: %v", err)
	}
	if n := p.Stat().Shoal().Closed; n != 0 {
		t.Errorf("Stat().Shoal().Closed = %d after a hijack, want 0: the pool closed nothing", n)
	}
}

// TestAfterConnectPanicClosesTheConnection: a panic in AfterConnect fails
// that dial (the core recovers it) and closes the session it had opened:
// the server keeps no backend that the pool does not count. The caller of a
// pool that never connected gets the panic as the dial's error at once; the
// next dial, after the backoff, serves a caller.
func TestAfterConnectPanicClosesTheConnection(t *testing.T) {
	app := fmt.Sprintf("shoalpgx-panic-%d", time.Now().UnixNano())
	var panicked atomic.Bool
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 1
		c.ConnConfig.RuntimeParams["application_name"] = app
		c.AfterConnect = func(context.Context, *pgx.Conn) error {
			if panicked.CompareAndSwap(false, true) {
				panic("AfterConnect broke")
			}
			return nil
		}
	})
	ctx := pgtest.Ctx(t)
	if err := p.Ping(ctx); err == nil || !strings.Contains(err.Error(), "AfterConnect broke") {
		t.Fatalf("Ping on the dial whose AfterConnect panicked: %v, want the panic as the dial's error", err)
	}
	eventually(t, 10*time.Second, "a Ping served by the next dial", func() bool { return p.Ping(ctx) == nil })
	if s := p.Stat().Shoal(); s.DialErrors != 1 || s.TotalConns != 1 {
		t.Fatalf("%+v, want the panicked dial counted as failed and one connection open", s)
	}
	p.Close() // its own connection leaves too: only the panicked one could remain
	probe := newTestPool(t, func(c *Config) { c.MaxConns = 1 })
	n := -1
	for range 100 { // the backend ends as the server reads the client's goodbye
		if err := probe.QueryRow(ctx, "select count(*) from pg_stat_activity where application_name = $1", app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%d backends of the panicked dial still open 2s later", n)
}

// TestStatAndReset: Stat reads as pgxpool's does (here its counts of
// acquires, connections and idle closes), and Reset replaces every
// connection while the pool stays open.
func TestStatAndReset(t *testing.T) {
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 2
		c.MaxConnIdleTime = 100 * time.Millisecond
	})
	ctx := pgtest.Ctx(t)
	c, _ := acquireOne(t, p)
	c.Release()
	st := p.Stat()
	// A second dial may be in flight: the first acquire dialled for itself
	// and the pool may have started another; TotalConns counts it.
	if st.AcquireCount() != 1 || st.NewConnsCount() < 1 || st.TotalConns() < 1 || st.IdleConns() < 1 || st.AcquiredConns() != 0 || st.MaxConns() != 2 {
		t.Fatalf("Stat after one acquire: acquires %d, new %d, total %d, idle %d, acquired %d, max %d",
			st.AcquireCount(), st.NewConnsCount(), st.TotalConns(), st.IdleConns(), st.AcquiredConns(), st.MaxConns())
	}
	for i := 0; p.Stat().MaxIdleDestroyCount() < 1; i++ {
		if i == 100 {
			t.Fatalf("no idle close counted 2s past MaxConnIdleTime: %+v", p.Stat().Shoal())
		}
		time.Sleep(20 * time.Millisecond)
	}

	c, pid := acquireOne(t, p)
	c.Release()
	p.Reset()
	c2, pid2 := acquireOne(t, p)
	defer c2.Release()
	if pid2 == pid {
		t.Fatalf("backend %d still in use after Reset", pid)
	}
	if err := c2.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}
