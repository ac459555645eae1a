package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// newPipelinedPool opens a pipelined pool on the test server.
func newPipelinedPool(t testing.TB, maxConns int32, depth int, mutate func(*Config)) *Pool {
	t.Helper()
	return newTestPool(t, func(c *Config) {
		c.MaxConns = maxConns
		c.Pipeline = depth
		if mutate != nil {
			mutate(c)
		}
	})
}

func TestPipelineBasics(t *testing.T) {
	p := newPipelinedPool(t, 4, 8, nil)
	ctx := context.Background()
	var n int
	if err := p.QueryRow(ctx, "select $1::int + 1", 41).Scan(&n); err != nil || n != 42 {
		t.Fatalf("QueryRow: %d, %v", n, err)
	}
	rows, err := p.Query(ctx, "select g, 'x' || g from generate_series(1, $1::int) g", 3)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowToMap)
	if err != nil || len(got) != 3 || got[2]["g"] != int32(3) || got[0]["?column?"] != "x1" {
		t.Fatalf("Query: %v, %v", got, err)
	}
	tag, err := p.Exec(ctx, "select 1")
	if err != nil || tag.String() != "SELECT 1" {
		t.Fatalf("Exec: %q, %v", tag, err)
	}
	_, err = p.Exec(ctx, "select 1/$1::int", 0)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "22012" {
		t.Fatalf("Exec division by zero: %v", err)
	}
	if err := p.QueryRow(ctx, "select 1 where false").Scan(&n); !errors.Is(err, pgx.ErrNoRows) {
		t.Fatalf("no rows: %v", err)
	}
	if s := p.pipe.core.Stats(); s.TotalConns == 0 {
		t.Fatalf("nothing went through the shared connections: %+v", s)
	}
}

func TestPipelineBatch(t *testing.T) {
	p := newPipelinedPool(t, 4, 8, nil)
	ctx := context.Background()
	b := &pgx.Batch{}
	b.Queue("select $1::int", 7)
	var got []int
	b.Queue("select generate_series(1, 3)").Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var n int
			if err := rows.Scan(&n); err != nil {
				return err
			}
			got = append(got, n)
		}
		return rows.Err()
	})
	br := p.SendBatch(ctx, b)
	if _, ok := br.(*pipeBatchResults); !ok {
		t.Fatalf("batch not pipelined: %T", br)
	}
	var n int
	if err := br.QueryRow().Scan(&n); err != nil || n != 7 {
		t.Fatalf("first: %d, %v", n, err)
	}
	if err := br.Close(); err != nil || len(got) != 3 {
		t.Fatalf("Close: %v, %v", err, got)
	}

	// One Sync for the batch: an error rolls back its earlier statements.
	if _, err := p.Exec(ctx, "create table if not exists pipe_batch (id int primary key)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = p.Exec(context.Background(), "drop table pipe_batch") })
	b = &pgx.Batch{}
	b.Queue("insert into pipe_batch values (1)")
	b.Queue("select 1/0")
	err := p.SendBatch(ctx, b).Close()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "22012" {
		t.Fatalf("batch error: %v", err)
	}
	var count int
	if err := p.QueryRow(ctx, "select count(*) from pipe_batch").Scan(&count); err != nil || count != 0 {
		t.Fatalf("rows after a failed batch: %d, %v", count, err)
	}

	// A batch that begins a transaction gets a whole connection.
	b = &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	b.Queue("insert into pipe_batch values (2)")
	br = p.SendBatch(ctx, b)
	if _, ok := br.(*pipeBatchResults); ok || br.Tx() == nil {
		t.Fatalf("a transaction's batch was pipelined: %T", br)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	if err := br.Tx().Commit(ctx); err != nil {
		t.Fatal(err)
	}

	// So does a batch with a session statement anywhere in it.
	b = &pgx.Batch{}
	b.Queue("select 1")
	b.Queue("set application_name = 'pipe_batch'")
	br = p.SendBatch(ctx, b)
	if _, ok := br.(*pipeBatchResults); ok {
		t.Fatal("a batch holding a SET was pipelined")
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
}

// pool_pipeline and Config.Pipeline: 0 is off, a negative value and a
// MinConns that leaves no room for a shared connection are errors naming
// the setting.
func TestPipelineConfig(t *testing.T) {
	cfg, err := ParseConfig("postgres://u@127.0.0.1/db?pool_pipeline=8&pool_max_conns=4")
	if err != nil || cfg.Pipeline != 8 {
		t.Fatalf("pool_pipeline=8: %v, %d", err, cfg.Pipeline)
	}
	if _, err := ParseConfig("postgres://u@127.0.0.1/db?pool_pipeline=-1"); err == nil || !strings.Contains(err.Error(), "pool_pipeline") {
		t.Fatalf("pool_pipeline=-1: %v", err)
	}
	if cfg.PipelineFill != 800*time.Microsecond {
		t.Fatalf("PipelineFill = %s by default, want 800µs", cfg.PipelineFill)
	}
	cfg, err = ParseConfig("postgres://u@127.0.0.1/db?pool_pipeline=8&pool_pipeline_fill=0")
	if err != nil || cfg.PipelineFill != 0 {
		t.Fatalf("pool_pipeline_fill=0: %v, %s", err, cfg.PipelineFill)
	}
	if _, err := ParseConfig("postgres://u@127.0.0.1/db?pool_pipeline_fill=soon"); err == nil || !strings.Contains(err.Error(), "pool_pipeline_fill") {
		t.Fatalf("pool_pipeline_fill=soon: %v", err)
	}
	for _, c := range []struct {
		mutate func(*Config)
		want   string
	}{
		{func(c *Config) { c.Pipeline = -1 }, "Pipeline must be >= 0"},
		{func(c *Config) { c.Pipeline = 4; c.PipelineFill = -time.Millisecond }, "PipelineFill must be >= 0"},
		{func(c *Config) { c.Pipeline = 4; c.MaxConns = 1 }, "MaxConns must be >= 2 with Pipeline"},
		{func(c *Config) { c.Pipeline = 4; c.MaxConns, c.MinConns = 3, 2 }, "MinConns must be < MaxConns-1 (2) with Pipeline"},
	} {
		cfg := testConfig(t, c.mutate)
		p, err := NewWithConfig(context.Background(), cfg)
		if err == nil {
			p.Close()
			t.Fatalf("want an error with %q", c.want)
		}
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("got %v, want a ConfigError with %q", err, c.want)
		}
	}
	p := newTestPool(t, nil)
	if p.pipe != nil {
		t.Fatal("a pool without pool_pipeline has shared connections")
	}
}

// The read pool pipelines as the pool does, and a ReadMaxConns of 1, too
// small for both kinds, is no error there (Reads would panic on a refused
// config): that read pool gives every read a whole connection.
func TestPipelineReadsConfig(t *testing.T) {
	t.Run("pipelines", func(t *testing.T) {
		p := newPipelinedPool(t, 4, 8, nil)
		if rp := p.Reads(); rp.p.pipe == nil || rp.p.config.Pipeline != 8 {
			t.Fatal("the read pool does not pipeline")
		}
	})
	t.Run("ReadMaxConns 1", func(t *testing.T) {
		p := newPipelinedPool(t, 4, 8, func(c *Config) { c.ReadMaxConns = 1 })
		if rp := p.Reads(); rp.p.pipe != nil {
			t.Fatal("a read pool of one connection pipelines")
		}
	})
}

// A notice raised by a pipelined statement reaches ConnConfig.OnNotice,
// with the shared connection's PgConn.
func TestPipelineNotice(t *testing.T) {
	admin := pgtest.AdminConn(t)
	ctx := pgtest.Ctx(t)
	fn := fmt.Sprintf("pipe_notice_%d", os.Getpid())
	if _, err := admin.Exec(ctx, "create or replace function "+fn+"(n int) returns int language plpgsql as $$ begin raise notice 'pipelined %', n; return n; end $$"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "drop function "+fn) })
	type notice struct {
		pid uint32
		msg string
	}
	got := make(chan notice, 1)
	p := newPipelinedPool(t, 4, 8, func(c *Config) {
		c.ConnConfig.OnNotice = func(pc *pgconn.PgConn, n *pgconn.Notice) { got <- notice{pc.PID(), n.Message} }
	})
	var n int
	if err := p.QueryRow(ctx, "select "+fn+"($1)", 7).Scan(&n); err != nil || n != 7 {
		t.Fatal(n, err)
	}
	select {
	case m := <-got:
		if m.msg != "pipelined 7" || !pipePIDs(p)[m.pid] {
			t.Fatalf("notice %q from pid %d; shared connections %v", m.msg, m.pid, pipePIDs(p))
		}
	default:
		t.Fatal("no notice")
	}
}

// SetMaxConns divides the new limit between the two kinds as MaxConns is.
func TestPipelineSetMaxConns(t *testing.T) {
	p := newPipelinedPool(t, 8, 8, nil)
	if err := p.SetMaxConns(4); err != nil {
		t.Fatal(err)
	}
	if w, s := p.core.Stats().MaxConns, p.pipe.core.Stats().MaxConns; w != 2 || s != 2 {
		t.Fatalf("after SetMaxConns(4): %d whole, %d shared, want 2 and 2", w, s)
	}
	pgtest.WaitFor(t, 5*time.Second, "the shared connections down to 2", func() bool { return len(p.pipe.conns()) <= 2 })
	// Refused, naming the pool, as every SetMaxConns error does
	// (docs/settings.md, "Names").
	if err := p.SetMaxConns(1); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("pool %q: SetMaxConns(1)", p.Stat().Shoal().Name)) {
		t.Fatalf("SetMaxConns(1) with Pipeline: %v, want an error naming the pool", err)
	}
	var n int
	if err := p.QueryRow(context.Background(), "select $1::int", 3).Scan(&n); err != nil || n != 3 {
		t.Fatal(n, err)
	}
}

// SetMaxConns above the MaxConns the pool was made with raises each kind's
// cap, but the two together still stay within that MaxConns: with 4 shared
// connections kept busy, whole connections asked for all at once get no
// more than the rest, and the server never counts more than 8.
func TestPipelineSetMaxConnsAboveMaxConns(t *testing.T) {
	const name = "shoal-setmaxconns-above"
	p := newPipelinedPool(t, 8, 8, func(c *Config) { c.ConnConfig.RuntimeParams["application_name"] = name })
	if err := p.SetMaxConns(16); err != nil {
		t.Fatal(err)
	}
	if w, s := p.core.Stats().MaxConns, p.pipe.core.Stats().MaxConns; w != 8 || s != 8 {
		t.Fatalf("after SetMaxConns(16): %d whole, %d shared, want 8 and 8", w, s)
	}
	ctx := pgtest.Ctx(t)
	most, held := squeeze(t, 4, func() error { _, err := p.Exec(ctx, "select pg_sleep(0.02)"); return err },
		8, p.Acquire, func() int { return serverConns(t, name) })
	if most > 8 {
		t.Fatalf("the server counted %d of the pool's connections after SetMaxConns(16), above the MaxConns of 8 it was made with", most)
	}
	if held == 0 || held == 8 {
		t.Fatalf("%d of 8 whole connections acquired beside busy shared ones, want some and not all", held)
	}
}

// squeeze keeps busy callers running run, a slow pipelined statement, and
// meanwhile asks for n whole connections at once through acquire, each
// giving up after 500ms, and polls count, the pool's connections at the
// server, for as long. It returns the most count saw and how many whole
// connections were acquired, all released before it returns.
func squeeze(t *testing.T, busy int, run func() error, n int, acquire func(context.Context) (*Conn, error), count func() int) (most, acquired int) {
	t.Helper()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range busy {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := run(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var mu sync.Mutex
	var held []*Conn
	for range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(pgtest.Ctx(t), 500*time.Millisecond)
			defer cancel()
			c, err := acquire(ctx)
			if err != nil {
				return // the rest is the shared connections'
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		})
	}
	for range 20 {
		most = max(most, count())
		time.Sleep(25 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	for _, c := range held {
		c.Release()
	}
	return most, len(held)
}

// Pipeline 1: a shared connection carries one statement at a time, so
// nothing spreads ahead of need; the pool works as with any depth.
func TestPipelineOfOne(t *testing.T) {
	p := newPipelinedPool(t, 4, 1, nil)
	ctx := pgtest.Ctx(t)
	var n int
	if err := p.QueryRow(ctx, "select $1::int + 1", 1).Scan(&n); err != nil || n != 2 {
		t.Fatalf("QueryRow with Pipeline 1: %d, %v", n, err)
	}
	if s := p.pipe.core.Stats(); s.TotalConns == 0 {
		t.Fatalf("nothing went through the shared connections: %+v", s)
	}
}

// The shared connections kept open: two, fewer when MaxConns leaves no
// room for them beside MinConns and one whole connection, none under a
// Budget of the user's (which may be smaller than MaxConns).
func TestPipelineSharedFloor(t *testing.T) {
	b, err := shoal.NewBudget(8)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		max, min int32
		budget   shoal.Budget
		want     int
	}{
		{8, 0, nil, 2},
		{3, 0, nil, 2},
		{2, 0, nil, 1},
		{3, 1, nil, 1},
		{8, 6, nil, 1},
		{8, 0, b, 0},
	} {
		if got := sharedFloor(&Config{MaxConns: tc.max, MinConns: tc.min, Budget: tc.budget}); got != tc.want {
			t.Errorf("MaxConns %d, MinConns %d, budget %v: %d shared connections kept, want %d", tc.max, tc.min, tc.budget != nil, got, tc.want)
		}
	}
	// And the pool opens what the floor says.
	p := newPipelinedPool(t, 3, 8, func(c *Config) { c.MinConns = 1 })
	pgtest.WaitFor(t, 5*time.Second, "one shared connection open", func() bool { return p.Stat().Pipelined().TotalConns == 1 })
	if n := p.pipe.core.Stats().MinConns; n != 1 {
		t.Fatalf("the shared pool keeps %d connections, want 1", n)
	}
}

// A pipelined batch takes the options among a queued query's arguments as
// pgx's SendBatch does: leading query rewriters (named arguments) only.
// A QueryExecMode or QueryResultFormats there is an ordinary argument,
// which the statement does not take, so the batch fails as on a whole
// connection, rather than run where pgx would not. Each batch runs on a
// whole connection's pgx.Conn and through the pool, which pipelines it.
func TestPipelineBatchTakesOptionsAsPgx(t *testing.T) {
	p := newPipelinedPool(t, 4, 8, nil)
	ctx := pgtest.Ctx(t)
	whole, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Release()
	cases := []struct {
		name, sql string
		args      []any
	}{
		{"exec mode", "select $1::int", []any{pgx.QueryExecModeExec, 7}},
		{"describe exec mode", "select $1::int", []any{pgx.QueryExecModeDescribeExec, 7}},
		{"result formats", "select $1::int", []any{pgx.QueryResultFormats{pgx.BinaryFormatCode}, 7}},
		{"named arguments", "select @a::int", []any{pgx.NamedArgs{"a": 7}}},
		{"named arguments, then a mode", "select @a::int", []any{pgx.NamedArgs{"a": 7}, pgx.QueryExecModeExec}},
		{"a mode, then named arguments", "select @a::int", []any{pgx.QueryExecModeExec, pgx.NamedArgs{"a": 7}}},
	}
	run := func(send func(*pgx.Batch) pgx.BatchResults, sql string, args []any) (int, error) {
		b := &pgx.Batch{}
		b.Queue(sql, args...)
		br := send(b)
		var n int
		err := br.QueryRow().Scan(&n)
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		return n, err
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for range 2 { // unnamed, then by name on the shared connection
				want, werr := run(func(b *pgx.Batch) pgx.BatchResults { return whole.Conn().SendBatch(ctx, b) }, c.sql, c.args)
				got, gerr := run(func(b *pgx.Batch) pgx.BatchResults { return p.SendBatch(ctx, b) }, c.sql, c.args)
				if (werr == nil) != (gerr == nil) || got != want {
					t.Fatalf("pipelined: %d, %v; pgx: %d, %v", got, gerr, want, werr)
				}
			}
		})
	}
}
