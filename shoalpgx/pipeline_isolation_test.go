package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shoalpool/shoal/internal/pgpair"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// pipePIDs returns the backend pids of the pool's shared connections.
func pipePIDs(p *Pool) map[uint32]bool {
	pids := map[uint32]bool{}
	for _, c := range p.pipe.conns() {
		pids[c.pc.conn.PgConn().PID()] = true
	}
	return pids
}

// Transactions never share a connection, and no pipelined statement runs
// inside one: a row a transaction inserted is invisible to every pipelined
// query while the transaction is open, and a BEGIN sent through the pool's
// Exec goes to a whole connection, leaving the shared ones outside it.
// Each pipelined query takes a transaction id (txid_current), which
// statements inside one transaction share: every query's is its own.
func TestPipelineTransactionsApart(t *testing.T) {
	p := newPipelinedPool(t, 6, 8, nil)
	table := pipeTable(t, "pipe_tx", "id int")
	ctx := pgtest.Ctx(t)

	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, "insert into "+table+" values (1)"); err != nil {
		t.Fatal(err)
	}
	var txPID uint32
	var txID int64
	if err := tx.QueryRow(ctx, "select pg_backend_pid(), txid_current()").Scan(&txPID, &txID); err != nil {
		t.Fatal(err)
	}
	// A BEGIN through the pool: without pipelining it leaves a whole
	// connection in a transaction, which the pool rolls back.
	if _, err := p.Exec(ctx, "begin"); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	var seen, onTx atomic.Int64
	var idsMu sync.Mutex
	ids := map[int64]int{txID: 1} // how many ran in each transaction, the test's own counted once
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				var n int
				var pid uint32
				var id int64
				err := p.QueryRow(ctx, "select count(*), pg_backend_pid(), txid_current() from "+table).Scan(&n, &pid, &id)
				if err != nil {
					t.Error(err)
					return
				}
				seen.Add(int64(n))
				if pid == txPID {
					onTx.Add(1)
				}
				idsMu.Lock()
				ids[id]++
				idsMu.Unlock()
			}
		}()
	}
	wg.Wait()
	if seen.Load() != 0 || onTx.Load() != 0 {
		t.Fatalf("pipelined queries saw the transaction's row %d times, ran on its connection %d times", seen.Load(), onTx.Load())
	}
	for id, n := range ids {
		if n > 1 {
			t.Fatalf("%d pipelined queries ran inside one transaction (%d; the test's own is %d)", n, id, txID)
		}
	}
	if pids := pipePIDs(p); pids[txPID] || len(pids) == 0 {
		t.Fatalf("shared connections %v, the transaction's %d", pids, txPID)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := p.QueryRow(ctx, "select count(*) from "+table).Scan(&n); err != nil || n != 1 {
		t.Fatalf("after commit: %d, %v", n, err)
	}
}

// A backend killed mid-pipeline fails the callers whose statements were on
// it, and only them, at once, and the pool replaces it. Statements queued
// for it and not yet written never reached the server, and go to another
// connection. Every statement waits at the server on an advisory lock the
// test holds, so that the killed connection's callers must fail while the
// other connection's statements still wait: failing them only once
// something else had been answered would be too late.
func TestPipelineBackendKilled(t *testing.T) {
	p := newPipelinedPool(t, 4, 16, nil) // two shared connections
	admin := pgtest.AdminConn(t)
	ctx := pgtest.Ctx(t)
	gate := newServerGate(t, 2)
	var wg sync.WaitGroup
	pgtest.WaitFor(t, 5*time.Second, "both shared connections open", func() bool { return len(p.pipe.conns()) == 2 })
	pids := pipePIDs(p)
	if len(pids) != 2 {
		t.Fatalf("want 2 shared connections, got %v", pids)
	}
	var victim uint32
	for pid := range pids {
		victim = pid
		break
	}

	const callers = 16
	var failed, ok atomic.Int64
	start := make(chan struct{})
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var pid uint32
			var v int
			err := p.QueryRow(ctx, "select pg_backend_pid(), $1::int where "+gate.cond(), c).Scan(&pid, &v)
			switch {
			case err == nil && (pid == victim || v != c):
				t.Errorf("caller %d: answered from pid %d with %d after the kill", c, pid, v)
			case err == nil:
				ok.Add(1)
			default:
				// The server's own word for it, as the docs promise.
				var pgErr *pgconn.PgError
				if !errors.As(err, &pgErr) || pgErr.Code != "57P01" {
					t.Errorf("caller %d: %v, want the server's error (SQLSTATE 57P01)", c, err)
				}
				failed.Add(1)
			}
		}()
	}
	close(start)
	// Once every caller's statement is on a connection, count those
	// written to the victim and those still queued for it, then kill it.
	var onVictim, queuedOnVictim int
	pgtest.WaitFor(t, 5*time.Second, "every caller in flight", func() bool {
		inFlight := 0
		for _, c := range p.pipe.conns() {
			c.mu.Lock()
			callersOn, queued := 0, 0 // not counting the statement cache's preparations
			for _, r := range c.pending {
				if r.onDone == nil {
					callersOn++
					if slices.Index(c.queue, r) >= 0 {
						queued++
					}
				}
			}
			inFlight += callersOn
			if c.pc.conn.PgConn().PID() == victim {
				onVictim, queuedOnVictim = callersOn-queued, queued
			}
			c.mu.Unlock()
		}
		return inFlight == callers
	})
	if onVictim == 0 {
		t.Fatal("no statement was written to the connection to be killed: the test proves nothing")
	}
	if _, err := admin.Exec(ctx, "select pg_terminate_backend($1)", victim); err != nil {
		t.Fatal(err)
	}
	// The statements written to the victim fail while every other waits
	// at the gate, those that went to the other connection unwritten
	// included.
	pgtest.WaitFor(t, gateGuard, "the killed connection's callers to fail while the other statements wait at the server", func() bool {
		return int(failed.Load()) >= onVictim
	})
	if n := ok.Load(); n != 0 {
		t.Fatalf("%d statements answered while the test held them at the server", n)
	}
	gate.open()
	wg.Wait()
	// A statement seen queued may have been written since, by a writer
	// already at work: it fails with the connection. One never written
	// goes to another connection (TestPipelineUnwrittenStatementGoesElsewhere).
	if f := int(failed.Load()); f < onVictim || f > onVictim+queuedOnVictim || int(ok.Load()) != callers-f {
		t.Fatalf("%d failed, %d answered; %d were written to the killed connection and %d queued for it", failed.Load(), ok.Load(), onVictim, queuedOnVictim)
	}
	// The pool replaces it.
	var pid uint32
	if err := p.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid); err != nil || pid == victim {
		t.Fatalf("after the kill: pid %d, %v", pid, err)
	}
}

// A slow statement delays nobody on the other connections; new work goes
// to the other connection; callers queued behind it on its connection
// return when their deadlines pass, not when it ends. The slow statements
// wait at the server on an advisory lock the test holds, so that the
// callers behind them must return while those still wait: one that waited
// for its answer could not.
func TestPipelineSlowStatement(t *testing.T) {
	p := newPipelinedPool(t, 4, 8, nil) // two shared connections
	ctx := pgtest.Ctx(t)
	gate := newServerGate(t, 1)
	pgtest.WaitFor(t, 5*time.Second, "both shared connections open", func() bool { return len(p.pipe.conns()) == 2 })
	slowDone := make(chan struct{})
	var slowPID uint32
	go func() {
		defer close(slowDone)
		if err := p.QueryRow(ctx, "select pg_backend_pid() where "+gate.cond()).Scan(&slowPID); err != nil {
			t.Errorf("the slow statement: %v", err)
		}
	}()
	var busy *pipeConn
	pgtest.WaitFor(t, 5*time.Second, "the slow statement in flight", func() bool {
		for _, c := range p.pipe.conns() {
			c.mu.Lock()
			if len(c.pending) == 1 {
				busy = c
			}
			c.mu.Unlock()
		}
		return busy != nil
	})
	busyPID := busy.pc.conn.PgConn().PID()
	// New work goes to the other connection, and is not held up.
	for i := range 50 {
		var pid uint32
		if err := p.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		if pid == busyPID {
			t.Fatalf("query %d went to the busy connection", i)
		}
	}
	// Load the other connection as much, so that callers queue behind
	// a slow statement whichever connection they go to; those with
	// deadlines return at them. The shared connections capped at the two
	// open (half of MaxConns), so that new callers cannot wait for a
	// third instead.
	if err := p.SetMaxConns(4); err != nil {
		t.Fatal(err)
	}
	held := make(chan struct{})
	go func() {
		defer close(held)
		if _, err := p.Exec(ctx, "select where "+gate.cond()); err != nil {
			t.Errorf("the second slow statement: %v", err)
		}
	}()
	pgtest.WaitFor(t, 5*time.Second, "the second connection busy", func() bool {
		return p.pipe.core.Stats().Leases == 2
	})
	canceledBefore := p.pipe.core.Stats().CanceledAcquires
	const deadline, callers = 50 * time.Millisecond, 8
	var late [callers]time.Duration
	var errs [callers]error
	returnsBefore(t, "the statements ahead of them were answered (the test holds them at the server)", func() {
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				dctx, cancel := context.WithTimeout(ctx, deadline)
				defer cancel()
				start := time.Now()
				_, errs[i] = p.Exec(dctx, "select 1 from pg_sleep(0)")
				late[i] = time.Since(start) - deadline
			})
		}
		wg.Wait()
	})
	// Held at the server: neither slow statement can have been answered.
	select {
	case <-slowDone:
		t.Fatal("the slow statement was answered while the test held it at the server")
	case <-held:
		t.Fatal("the second slow statement was answered while the test held it at the server")
	default:
	}
	for i, err := range errs {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("caller %d behind the slow statements: %v, want context.DeadlineExceeded", i, err)
		}
	}
	// Every one of them went on a connection, behind a slow statement,
	// rather than waiting for a connection.
	if n := p.pipe.core.Stats().CanceledAcquires - canceledBefore; n != 0 {
		t.Errorf("%d callers gave up waiting for a shared connection, want every one queued behind a slow statement", n)
	}
	gate.open()
	<-slowDone
	<-held
	if slowPID != busyPID {
		t.Errorf("the slow statement answered from backend %d, want %d", slowPID, busyPID)
	}
	t.Logf("%d callers behind slow statements returned at most %s past their deadline", callers, slices.Max(late[:]))
}

// The server never sees more than MaxConns connections from a pipelined
// pool, shared and whole together, under a load of both kinds.
func TestPipelineMaxConnsAtServer(t *testing.T) {
	const maxConns = 6
	p := newPipelinedPool(t, maxConns, 4, nil)
	admin := pgtest.AdminConn(t)
	app := pgtest.AppName(t)
	ctx := pgtest.Ctx(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 48 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 40; j++ {
				var err error
				switch (i + j) % 4 {
				case 0:
					err = pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error {
						_, err := tx.Exec(ctx, "select pg_sleep(0.001)")
						return err
					})
				case 1:
					err = p.AcquireFunc(ctx, func(c *Conn) error { return c.Ping(ctx) })
				default:
					_, err = p.Exec(ctx, "select $1::int from pg_sleep(0.001)", j)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var most int
	polled := 0
	go func() { wg.Wait(); close(stop) }()
poll:
	for {
		select {
		case <-stop:
			break poll
		default:
		}
		var n int
		if err := admin.QueryRow(ctx, "select count(*) from pg_stat_activity where application_name = $1", app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		most = max(most, n)
		polled++
	}
	t.Logf("at most %d connections at the server over %d looks", most, polled)
	if most > maxConns {
		t.Fatalf("the server saw %d connections of a pool of MaxConns %d", most, maxConns)
	}
	if most < 2 {
		t.Fatalf("the server saw %d connections: the load did not use both kinds", most)
	}
}

// Types registered in AfterConnect decode pipelined results and encode
// pipelined arguments.
func TestPipelineAfterConnectTypes(t *testing.T) {
	admin := pgtest.AdminConn(t)
	ctx := pgtest.Ctx(t)
	typ := fmt.Sprintf("pipe_point_%d", time.Now().UnixNano()%1e9)
	if _, err := admin.Exec(ctx, "create type "+typ+" as (x int, y int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "drop type "+typ) })
	p := newPipelinedPool(t, 4, 8, func(c *Config) {
		c.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
			dt, err := conn.LoadType(ctx, typ)
			if err != nil {
				return err
			}
			conn.TypeMap().RegisterType(dt)
			return nil
		}
	})
	rows, err := p.Query(ctx, "select row($1::int, 2)::"+typ, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, isPipe := rows.(*pipeRows); !isPipe {
		t.Fatalf("not pipelined: %T", rows)
	}
	var got []any
	for rows.Next() {
		if got, err = rows.Values(); err != nil {
			t.Fatal(err)
		}
	}
	m, isMap := got[0].(map[string]any)
	if !isMap || m["x"] != int32(1) || m["y"] != int32(2) {
		t.Fatalf("the composite came back as %#v: its registered type was not used", got[0])
	}
	var pt struct{ X, Y int32 }
	if err := p.QueryRow(ctx, "select $1::"+typ, "(5,6)").Scan(pgtype.CompositeFields{&pt.X, &pt.Y}); err != nil || pt.X != 5 || pt.Y != 6 {
		t.Fatalf("round trip through the registered type: %+v, %v", pt, err)
	}
}

// The type map a pipelined Query's rows return is a copy of the shared
// connection's: a type registered on it is that caller's alone, and the
// next caller on the same connection does not see it.
func TestPipelineRowsTypeMapIsACopy(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	conn := oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	const oid = 4000000001 // no type has it
	rows, err := p.Query(ctx, "select 1")
	if err != nil {
		t.Fatal(err)
	}
	if _, isPipe := rows.(*pipeRows); !isPipe {
		t.Fatalf("not pipelined: %T", rows)
	}
	m := rows.TypeMap()
	if m == conn.tm.m {
		t.Fatal("the rows hand out the shared connection's own type map")
	}
	m.RegisterType(&pgtype.Type{Name: "shoal_private", OID: oid, Codec: pgtype.TextCodec{}})
	rows.Close()
	rows, err = p.Query(ctx, "select 1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if _, seen := rows.TypeMap().TypeForOID(oid); seen {
		t.Fatal("a type one caller registered on its rows' map reached the next caller on the connection")
	}
}

// After a failover, a pipelined write refused as read-only resets the
// pool, shared connections included, so that the writes after it reach
// the new primary, as without pipelining.
func TestPipelineFailoverReadOnlyResets(t *testing.T) {
	pair := pgpair.ForTest(t)
	ctx := context.Background()
	cfg, err := ParseConfig(pair.HA)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns, cfg.Pipeline, cfg.RoleCheckPeriod = 4, 8, 0 // no role check: the reset is the refused write's
	pool := newPoolFor(t, cfg)
	if _, err := pool.Exec(ctx, "CREATE TABLE IF NOT EXISTS shoalpgx_failover (n integer)"); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, 5*time.Second, "the shared connections open", func() bool { return len(pool.pipe.conns()) == 2 })
	if err := pair.FenceAndPromote(ctx); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = pool.Exec(wctx, "INSERT INTO shoalpgx_failover VALUES ($1)", 0)
	pgpair.WantFencedWrite(t, err)
	pair.WantWritesOnStandby(t, "shoalpgx_failover", func(sql string, arg int, port *int) error {
		return pool.QueryRow(wctx, sql, arg).Scan(port)
	})
}

// A caller that gives up returns at once, and its statement, already sent,
// runs on: a shared connection's abandoned statement is cancelled only
// once it has gone unanswered for CancelTimeout (pipeline_silent.go), here
// longer than the statement takes. The row it inserts commits after its
// caller has gone.
func TestPipelineGivenUpStatementRunsOn(t *testing.T) {
	p := newPipelinedPool(t, 4, 8, func(c *Config) { c.CancelTimeout = 10 * time.Second })
	table := pipeTable(t, "pipe_given_up", "id int")
	ctx := pgtest.Ctx(t)
	admin := pgtest.AdminConn(t)
	count := func() int {
		var n int
		if err := admin.QueryRow(ctx, "select count(*) from "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The shared connections open first, so that the statement is written
	// well before its caller's deadline.
	pgtest.WaitFor(t, 5*time.Second, "two shared connections open", func() bool { return len(p.pipe.conns()) == 2 })
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err := p.Exec(short, "insert into "+table+" select 1 from pg_sleep(1)")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Exec past its deadline: %v, want context.DeadlineExceeded", err)
	}
	if n := count(); n != 0 {
		t.Fatalf("%d rows when the caller gave up: the statement had ended before its deadline, and the test proves nothing", n)
	}
	pgtest.WaitFor(t, 5*time.Second, "the given-up statement's row committed", func() bool { return count() == 1 })
}

// A pipelined query's rows are read whole before Query returns, so a
// caller that reads them slowly, or not yet, holds no connection: with its
// rows open the shared connections carry nothing, and another statement
// runs at once.
func TestPipelineSlowReaderHoldsNoConnection(t *testing.T) {
	p := newPipelinedPool(t, 2, 16, nil)
	ctx := pgtest.Ctx(t)
	rows, err := p.Query(ctx, "select generate_series(1, 1000)")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if n := p.Stat().Pipelined().Leases; n != 0 {
		t.Fatalf("%d statements in flight with the rows unread, want none", n)
	}
	var v int
	if err := p.QueryRow(ctx, "select $1::int", 7).Scan(&v); err != nil || v != 7 {
		t.Fatalf("a statement beside unread rows: %d, %v", v, err)
	}
	sum := 0
	for rows.Next() {
		var x int
		if err := rows.Scan(&x); err != nil {
			t.Fatal(err)
		}
		sum += x
	}
	if err := rows.Err(); err != nil || sum != 1000*1001/2 {
		t.Fatalf("the rows read late: sum %d, %v", sum, err)
	}
}

// The router reads statement text, so a statement that opens a
// transaction could in principle get past it; the reader is the safety
// net: the answer that ends in a transaction still open fails, with its
// connection, which closes so that the server rolls the transaction back.
// Here a request sent straight through the shared pool, past the router,
// opens one and inserts a row: its caller gets the error, the row is never
// committed, and the connection is gone.
func TestPipelineTransactionLeftOpenClosesTheConnection(t *testing.T) {
	p := newPipelinedPool(t, 4, 8, nil)
	table := pipeTable(t, "pipe_left_open", "id int")
	ctx := pgtest.Ctx(t)
	r := p.pipe.getReq()
	r.res[0].discard = true
	err := p.pipe.run(ctx, r, modeUnnamed, func(_ *pipeBuild, buf []byte) ([]byte, error) {
		return (&pgproto3.Query{String: "begin; insert into " + table + " values (1)"}).Encode(buf)
	})
	if err != nil {
		t.Fatal(err)
	}
	c := r.conn
	if err := r.result(0).err; !errors.Is(err, errPipeTxOpen) {
		t.Fatalf("the statement that left a transaction open: %v, want %v", err, errPipeTxOpen)
	}
	if !errors.Is(c.broken(), errPipeTxOpen) {
		t.Fatalf("its connection: %v, want it closed with %v", c.broken(), errPipeTxOpen)
	}
	pgtest.WaitFor(t, 5*time.Second, "the connection gone from the pool", func() bool { return !slices.Contains(p.pipe.conns(), c) })
	var n int
	if err := p.QueryRow(ctx, "select count(*) from "+table).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows after the connection closed: %d, %v; want 0, rolled back", n, err)
	}
}

// The statements behind one that leaves a transaction open, on its
// connection, ran inside that transaction: they fail with it, and the
// server rolls back their work with the rest. One still queued for the
// connection, never written, goes to another and runs. The open
// transaction's request waits on an advisory lock the test holds, so that
// the two behind it are on the connection before its answer comes: the
// first written (the server has two requests in hand), the second queued.
func TestPipelineTransactionLeftOpenFailsThoseBehind(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	conn := oneSharedConn(t, p)
	table := pipeTable(t, "pipe_left_open_behind", "id int")
	ctx := pgtest.Ctx(t)
	const lock = 7317
	unlock := holdAdvisoryLock(t, lock)
	opened := make(chan error, 1)
	go func() {
		r := p.pipe.getReq()
		r.res = make([]pipeResult, 3)
		for i := range r.res {
			r.res[i].discard = true
		}
		err := p.pipe.run(ctx, r, modeUnnamed, func(_ *pipeBuild, buf []byte) ([]byte, error) {
			return (&pgproto3.Query{String: fmt.Sprintf("begin; insert into %s values (1); select pg_advisory_xact_lock(%d)", table, lock)}).Encode(buf)
		})
		if err == nil {
			err = r.result(0).err
		}
		opened <- err
	}()
	counts := func(pending, queued int) func() bool {
		return func() bool {
			conn.mu.Lock()
			defer conn.mu.Unlock()
			return len(conn.pending) == pending && len(conn.queue) == queued
		}
	}
	pgtest.WaitFor(t, 5*time.Second, "the open transaction's request waiting on the lock", counts(1, 0))
	written, queued := make(chan error, 1), make(chan error, 1)
	for i, ch := range []chan error{written, queued} {
		go func() {
			_, err := p.Exec(ctx, "insert into "+table+" values ($1)", pgx.QueryExecModeExec, 2+i)
			ch <- err
		}()
		pgtest.WaitFor(t, 5*time.Second, "the statement behind it", counts(2+i, i))
	}
	unlock()
	if err := <-opened; !errors.Is(err, errPipeTxOpen) {
		t.Fatalf("the request that left a transaction open: %v, want %v", err, errPipeTxOpen)
	}
	if err := <-written; !errors.Is(err, errPipeTxOpen) {
		t.Errorf("the statement written behind it: %v, want %v", err, errPipeTxOpen)
	}
	if err := <-queued; err != nil {
		t.Errorf("the statement queued behind it: %v, want it run on another connection", err)
	}
	var ids []int32
	rows, err := p.Query(ctx, "select id from "+table)
	if err == nil {
		ids, err = pgx.CollectRows(rows, pgx.RowTo[int32])
	}
	if err != nil || !slices.Equal(ids, []int32{3}) {
		t.Fatalf("rows after the connection closed: %v, %v; want the queued statement's alone, the rest rolled back", ids, err)
	}
}
