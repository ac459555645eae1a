package shoalpgx

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgpair"
)

// pipelinedReadsOn fails unless the read pool's reads so far were all
// pipelined, on shared connections to addr: it has no whole connection,
// and every shared one is on addr.
func pipelinedReadsOn(t *testing.T, reads *ReadPool, addr string) {
	t.Helper()
	if reads.p.pipe == nil {
		t.Fatal("the read pool does not pipeline")
	}
	if n := reads.p.core.Stats().TotalConns; n != 0 {
		t.Fatalf("the read pool has %d whole connections, want its reads all pipelined", n)
	}
	conns := reads.p.pipe.conns()
	if len(conns) == 0 {
		t.Fatal("the read pool has no shared connection")
	}
	for _, c := range conns {
		if c.pc.host.addr != addr {
			t.Fatalf("a shared read connection is on %s, want %s", c.pc.host.addr, addr)
		}
	}
}

// Pipelined reads go to the standby, and a write sent through the read
// pool's shared connections is refused by the server (SQLSTATE 25006),
// while the pool's own pipelined statements go to the primary.
func TestReadsPipelinedGoToStandby(t *testing.T) {
	pair := pgpair.ForTest(t)
	pool, reads := readsPool(t, pair, time.Second, "pool_pipeline=4")
	ctx := context.Background()
	if got := serverPort(t, reads); got != pair.Standby.Port {
		t.Fatalf("a read ran on port %s, want the standby's %s", got, pair.Standby.Port)
	}
	err := reads.QueryRow(ctx, "INSERT INTO shoalpgx_reads VALUES ($1) RETURNING n", 1).Scan(new(int))
	if !isReadOnlyRefusal(err) {
		t.Fatalf("a pipelined write through the read pool: %v, want SQLSTATE 25006", err)
	}
	b := &pgx.Batch{}
	b.Queue("SELECT 1")
	b.Queue("INSERT INTO shoalpgx_reads VALUES (2)")
	br := reads.SendBatch(ctx, b)
	_, err = br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	_ = br.Close()
	if !isReadOnlyRefusal(err) {
		t.Fatalf("a pipelined batch writing through the read pool: %v, want SQLSTATE 25006", err)
	}
	pipelinedReadsOn(t, reads, pair.Standby.Addr)
	if got := serverPort(t, pool); got != pair.Primary.Port {
		t.Fatalf("the pool's query ran on port %s, want the primary's %s", got, pair.Primary.Port)
	}
	if pool.pipe == nil || len(pool.pipe.conns()) == 0 {
		t.Fatal("the pool's statement was not pipelined")
	}
}

// With the standby stopped pipelined reads go to the primary, still
// read-only; once it runs again they move back to it, the shared
// connections on the primary retired.
func TestReadsPipelinedFallBackToPrimary(t *testing.T) {
	pair := pgpair.ForTest(t)
	_, reads := readsPool(t, pair, 100*time.Millisecond, "pool_pipeline=4")
	ctx := context.Background()
	if got := serverPort(t, reads); got != pair.Standby.Port {
		t.Fatalf("a read ran on port %s, want the standby's %s", got, pair.Standby.Port)
	}
	if err := pair.Stop(ctx, pair.Standby, pgpair.Fast); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "reads on the primary with the standby stopped", func() bool {
		port, err := tryPort(reads)
		return err == nil && port == pair.Primary.Port
	})
	err := reads.QueryRow(ctx, "INSERT INTO shoalpgx_reads VALUES ($1) RETURNING n", 3).Scan(new(int))
	if !isReadOnlyRefusal(err) {
		t.Fatalf("a pipelined write through the read pool on the primary: %v, want SQLSTATE 25006", err)
	}
	if err := pair.Start(ctx, pair.Standby); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "pipelined reads back on the restarted standby, none left on the primary", func() bool {
		port, err := tryPort(reads)
		if err != nil || port != pair.Standby.Port {
			return false
		}
		for _, c := range reads.p.pipe.conns() {
			if c.pc.host.addr != pair.Standby.Addr {
				return false
			}
		}
		return true
	})
	pipelinedReadsOn(t, reads, pair.Standby.Addr)
}

// A standby further behind than MaxStandbyLag takes no pipelined reads
// until it has caught up: the look at its role, pipelined on a shared
// connection, moves them to the primary, and back once resumed.
func TestReadsPipelinedMaxStandbyLag(t *testing.T) {
	pair := pgpair.ForTest(t)
	pool, reads := readsPool(t, pair, 100*time.Millisecond, "pool_max_standby_lag=300ms", "pool_pipeline=4")
	wantReadsOffTheLaggingStandby(t, pair, pool, reads, 4, "pipelined reads")
	if reads.p.core.Stats().TotalConns != 0 {
		t.Error("the read pool dialled whole connections: its reads were not all pipelined")
	}
}

// A shared read connection whose session a pipelined statement made
// writable (a function calling set_config) takes no more reads: every
// read after it, on any shared connection, finds the session read-only.
func TestReadsPipelinedSessionTurnedWritable(t *testing.T) {
	pair := pgpair.ForTest(t)
	pool, reads := readsPool(t, pair, time.Second, "pool_pipeline=4")
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE OR REPLACE FUNCTION shoalpgx_writable() RETURNS text LANGUAGE sql
		AS $$ SELECT set_config('default_transaction_read_only', 'off', false) $$`); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the function replicated", func() bool {
		var pid int
		return reads.QueryRow(ctx, "SELECT pg_backend_pid() FROM pg_proc WHERE proname = 'shoalpgx_writable'").Scan(&pid) == nil
	})
	if err := reads.QueryRow(ctx, "SELECT shoalpgx_writable()").Scan(new(string)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 8 {
				var ro string
				if err := reads.QueryRow(ctx, "SELECT current_setting('default_transaction_read_only')").Scan(&ro); err != nil || ro != "on" {
					errs <- ro
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for ro := range errs {
		t.Fatalf("a read after the session was made writable found default_transaction_read_only %q", ro)
	}
	pipelinedReadsOn(t, reads, pair.Standby.Addr)
}

// The standby promoted under pipelined reads: the look at its role, made
// on a shared connection at a statement's turn, finds it a primary now,
// and with no standby left the reads go on there, as fallback ones,
// without an error.
func TestReadsPipelinedStandbyPromotedUnderThem(t *testing.T) {
	pair := pgpair.ForTest(t)
	_, reads := readsPool(t, pair, 100*time.Millisecond, "pool_pipeline=4")
	ctx := context.Background()
	if got := serverPort(t, reads); got != pair.Standby.Port {
		t.Fatalf("a read ran on port %s, want the standby's %s", got, pair.Standby.Port)
	}
	pipelinedReadsOn(t, reads, pair.Standby.Addr)
	if err := pair.Stop(ctx, pair.Primary, pgpair.Fast); err != nil {
		t.Fatal(err)
	}
	if err := pair.Promote(ctx, pair.Standby); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "pipelined reads on the promoted standby, as fallback ones", func() bool {
		port, err := tryPort(reads)
		return err == nil && port == pair.Standby.Port && hostStat(t, reads.Hosts(), pair.Standby.Addr).Role == RolePrimary
	})
	if reads.p.pipe == nil || len(reads.p.pipe.conns()) == 0 {
		t.Fatal("the reads after the promotion were not pipelined")
	}
}

// ReadMaxConns bounds the read pool's whole and shared connections
// together, as MaxConns does the pool's: with pipelined reads keeping
// shared connections busy, whole read connections asked for all at once
// get no more than the rest, and the standby never counts more than
// ReadMaxConns of the read pool's connections.
func TestReadsPipelinedWithinReadMaxConns(t *testing.T) {
	pair := pgpair.ForTest(t)
	name := "shoal-reads-maxconns"
	_, reads := readsPool(t, pair, time.Second, "pool_pipeline=4", "pool_read_max_conns=4", "application_name="+name)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, pair.Standby.ConnString)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	count := func() int {
		var n int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", name).Scan(&n); err != nil {
			t.Error(err)
		}
		return n
	}
	most, held := squeeze(t, 3, func() error { return reads.QueryRow(ctx, "select pg_sleep(0.02)").Scan(nil) },
		4, reads.Acquire, count)
	if most == 0 {
		t.Fatal("the standby counted none of the read pool's connections: the count proves nothing")
	}
	if most > 4 {
		t.Fatalf("the standby counted %d of the read pool's connections, above ReadMaxConns 4", most)
	}
	if held == 4 {
		t.Fatal("all 4 whole read connections acquired beside busy shared ones: ReadMaxConns not shared")
	}
	if reads.p.pipe == nil || len(reads.p.pipe.conns()) == 0 {
		t.Fatal("the reads were not pipelined")
	}
}
