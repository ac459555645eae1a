package shoalpgx

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/internal/pgcount"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// backendPIDs returns the server process ids behind every connection the
// pool holds, acquiring them all at once.
func backendPIDs(t testing.TB, p *Pool, n int) []uint32 {
	t.Helper()
	ctx := pgtest.Ctx(t)
	var conns []*Conn
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	var pids []uint32
	for range n {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var pid uint32
		if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	return pids
}

// Statements abandoned mid-flight are cancelled at the server and keep
// their connections: no dial, and the pool's connections are the same
// backends before and after. Over TLS too, with SCRAM's channel binding
// required, which needs pgx to find the *tls.Conn the pool's gate sits
// under.
func TestCancelAbandonedStatementsKeepTheirConnections(t *testing.T) {
	t.Run("plain", func(t *testing.T) { abandonKeeps(t, nil) })
	t.Run("TLS", func(t *testing.T) {
		abandonKeeps(t, func(c *Config) {
			// The test server's certificate is Debian's self-signed one:
			// encryption is what is tested.
			c.ConnConfig.TLSConfig = &tls.Config{InsecureSkipVerify: true}
			c.ConnConfig.Fallbacks = nil
			c.ConnConfig.ChannelBinding = "require"
		})
	})
}

func abandonKeeps(t *testing.T, mutate func(*Config)) {
	const conns = 2
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = conns
		if mutate != nil {
			mutate(c)
		}
	})
	before := backendPIDs(t, p, conns)
	admin := pgtest.AdminConn(t)
	dials := p.Stat().Shoal().Dials
	for i := range 10 {
		ctx := pgtest.SleepingCtx(t, admin, before...)
		_, err := p.Exec(ctx, "SELECT pg_sleep(10)")
		pgtest.CheckCanceled(t, "Exec", ctx, err)
		if t.Failed() {
			t.Fatalf("round %d", i)
		}
	}
	if got := p.Stat().Shoal().Dials; got != dials {
		t.Errorf("%d dials after abandoned statements, want none", got-dials)
	}
	if after := backendPIDs(t, p, conns); !slices.Equal(before, after) {
		t.Errorf("the pool's backends were %v and are now %v: abandoned statements cost connections", before, after)
	}
}

// The race a cancel request brings: a request still on its way when the
// connection's next statement starts would cancel that statement. Many
// statements with tiny random deadlines on two connections, each followed
// by statements whose context never ends, on the pool and on a held
// connection: none of the latter may fail, least of all with SQLSTATE
// 57014. Bounded in statements and in time. CancelTimeout is long here: a
// cancel request left unanswered for 1s (once, on a busy machine under
// -race) has its connection closed, and a held connection's next
// statement then fails, as documented, which is not the race tested.
func TestCancelNeverReachesTheNextStatement(t *testing.T) {
	const (
		workers   = 8
		perWorker = 150
		timeLimit = 10 * time.Second
	)
	p := newTestPool(t, func(c *Config) { c.MaxConns = 2; c.CancelTimeout = 10 * time.Second })
	dials := p.Stat().Shoal().Dials
	stop := time.Now().Add(timeLimit)
	var canceled atomic.Int64 // abandoned statements the server cancelled
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			errs <- cancelStressWorker(p, w%2 == 1, perWorker, stop, &canceled)
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	t.Logf("%d abandoned statements cancelled at the server, %d dials", canceled.Load(), p.Stat().Shoal().Dials-dials)
	if canceled.Load() == 0 {
		t.Error("no statement was cancelled mid-flight: the test did not exercise the race")
	}
}

// cancelStressWorker runs rounds of one statement with a random deadline
// of up to 3ms and two without, through the pool or, with held, on one
// acquired connection per round. It returns the first failure of a
// statement whose context did not end. The abandoned statement sleeps
// from 1 to 20ms, so that its cancel request arrives now mid-flight and
// now as it ends, however long a loaded machine takes to deliver one.
func cancelStressWorker(p *Pool, held bool, rounds int, stop time.Time, canceled *atomic.Int64) error {
	const sleep = "SELECT pg_sleep(0.002)"
	const abandoned = "SELECT pg_sleep($1::float8)"
	bg, cancelBg := context.WithTimeout(context.Background(), time.Minute)
	defer cancelBg()
	for i := 0; i < rounds && time.Now().Before(stop); i++ {
		var c *Conn
		exec := p.Exec
		if held {
			var err error
			if c, err = p.Acquire(bg); err != nil {
				return fmt.Errorf("acquire: %w", err)
			}
			exec = c.Exec
		}
		ctx, cancel := context.WithTimeout(bg, time.Duration(rand.Int64N(int64(3*time.Millisecond))))
		_, err := exec(ctx, abandoned, 0.001+0.019*rand.Float64())
		cancel()
		if err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "57014" {
				canceled.Add(1)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				if c != nil {
					c.Release()
				}
				return fmt.Errorf("an abandoned statement's error does not match its context's: %w", err)
			}
		}
		for range 2 {
			if _, err := exec(bg, sleep); err != nil {
				if c != nil {
					c.Release()
				}
				return fmt.Errorf("round %d (held %v): a statement whose context did not end failed: %w", i, held, err)
			}
		}
		if c != nil {
			c.Release()
		}
	}
	return nil
}

// Every way of running a statement through the pool's pgx API (stdlib's
// tests take database/sql's), abandoned mid-flight, returns an error that
// matches the context's and holds the server's SQLSTATE 57014, and costs
// no connection: all run on the pool's one connection, which is the same
// backend at the end.
func TestCancelErrorsMatchTheContext(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 1 })
	ctx := pgtest.Ctx(t)
	before := backendPIDs(t, p, 1)
	admin := pgtest.AdminConn(t)
	for _, q := range []string{
		"CREATE TEMP TABLE slow_insert (x int)",
		"CREATE FUNCTION pg_temp.slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(10); RETURN NEW; END $$",
		"CREATE TRIGGER slow_insert BEFORE INSERT ON slow_insert FOR EACH ROW EXECUTE FUNCTION pg_temp.slow_insert()",
	} {
		if _, err := p.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	const slow = "SELECT pg_sleep(10)"
	copySrc := func() pgx.CopyFromSource { return pgx.CopyFromRows([][]any{{1}}) }
	table := pgx.Identifier{"slow_insert"}
	dials := p.Stat().Shoal().Dials

	paths := []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"Pool.Exec", func(ctx context.Context) error { _, err := p.Exec(ctx, slow); return err }},
		{"Pool.Query", func(ctx context.Context) error {
			rows, err := p.Query(ctx, slow)
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			return rows.Err()
		}},
		{"Pool.QueryRow", func(ctx context.Context) error { return p.QueryRow(ctx, slow).Scan(nil) }},
		{"Pool.SendBatch", func(ctx context.Context) error {
			b := &pgx.Batch{}
			b.Queue(slow)
			br := p.SendBatch(ctx, b)
			_, err := br.Exec()
			if cerr := br.Close(); cerr == nil || !errors.Is(cerr, ctx.Err()) {
				return fmt.Errorf("Close after the cancelled Exec returned %v", cerr)
			}
			return err
		}},
		{"Pool.CopyFrom", func(ctx context.Context) error {
			_, err := p.CopyFrom(ctx, table, []string{"x"}, copySrc())
			return err
		}},
		{"Pool.Begin Tx.Exec", func(ctx context.Context) error {
			tx, err := p.Begin(ctx)
			if err != nil {
				return fmt.Errorf("begin: %v", err)
			}
			defer tx.Rollback(ctx) // ctx has ended by then: rolled back in the background
			_, err = tx.Exec(ctx, slow)
			return err
		}},
		{"Pool.Begin Tx.Query", func(ctx context.Context) error {
			tx, err := p.Begin(ctx)
			if err != nil {
				return fmt.Errorf("begin: %v", err)
			}
			defer tx.Rollback(ctx)
			rows, err := tx.Query(ctx, slow)
			if err != nil {
				return err
			}
			rows.Close()
			return rows.Err()
		}},
		{"Conn.Exec", func(ctx context.Context) error {
			return withConn(p, func(c *Conn) error { _, err := c.Exec(ctx, slow); return err })
		}},
		{"Conn.Query", func(ctx context.Context) error {
			return withConn(p, func(c *Conn) error {
				rows, err := c.Query(ctx, slow)
				if err != nil {
					return err
				}
				for rows.Next() {
				}
				return rows.Err()
			})
		}},
		{"Conn.QueryRow", func(ctx context.Context) error {
			return withConn(p, func(c *Conn) error { return c.QueryRow(ctx, slow).Scan(nil) })
		}},
		{"Conn.SendBatch", func(ctx context.Context) error {
			return withConn(p, func(c *Conn) error {
				b := &pgx.Batch{}
				b.Queue(slow)
				br := c.SendBatch(ctx, b)
				defer br.Close()
				return br.QueryRow().Scan(nil)
			})
		}},
		{"Conn.CopyFrom", func(ctx context.Context) error {
			return withConn(p, func(c *Conn) error {
				_, err := c.CopyFrom(ctx, table, []string{"x"}, copySrc())
				return err
			})
		}},
		{"Conn.Begin Tx.Exec", func(ctx context.Context) error {
			return withConn(p, func(c *Conn) error {
				tx, err := c.Begin(ctx)
				if err != nil {
					return fmt.Errorf("begin: %v", err)
				}
				defer tx.Rollback(pgtest.Ctx(t)) // a Conn's transaction rolls back on its holder's time
				_, err = tx.Exec(ctx, slow)
				return err
			})
		}},
	}
	for _, path := range paths {
		// The last path's connection comes back once its cancel is
		// answered, in the background. Until then its backend may still
		// be in pg_sleep, which the next context would take for its own
		// statement's and end at once.
		pgtest.WaitFor(t, 10*time.Second, "the connection back from the last abandoned statement", func() bool { return p.Stat().AcquiredConns() == 0 })
		ctx := pgtest.SleepingCtx(t, admin, before...)
		pgtest.CheckCanceled(t, path.name, ctx, path.run(ctx))
	}

	if got := p.Stat().Shoal().Dials; got != dials {
		t.Errorf("%d dials after abandoned statements, want none", got-dials)
	}
	if after := backendPIDs(t, p, 1); !slices.Equal(before, after) {
		t.Errorf("the pool's backend was %v and is now %v: an abandoned statement cost the connection", before, after)
	}
}

// withConn runs f on a connection acquired from p, and releases it.
func withConn(p *Pool, f func(*Conn) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := p.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return f(c)
}

// 32 callers abandoning pg_sleep(1) after 50ms on MaxConns 4: the server
// never holds more than 4 of the pool's connections, sampled every 20ms
// from before the first caller starts until the last has returned. Each
// caller acquires first and gives its statement 50ms from then, so that
// every statement is abandoned while it runs; each abandons a few, so the
// load lasts about a second.
func TestCancelLoadHoldsMaxConnsAtTheServer(t *testing.T) {
	abandonUnderLoad(t, defaultCancelTimeout)
}

// abandonUnderLoad runs the load of TestCancelLoadHoldsMaxConnsAtTheServer
// on a pool with the given CancelTimeout.
func abandonUnderLoad(t *testing.T, cancelTimeout time.Duration) {
	const (
		maxConns = 4
		callers  = 32
		rounds   = 3
	)
	cfg := testConfig(t, func(c *Config) { c.MaxConns, c.CancelTimeout = maxConns, cancelTimeout })
	checker, err := pgcount.Start(pgtest.Ctx(t), pgcount.Config{
		ConnString: pgtest.ConnString(t),
		Arg:        cfg.ConnConfig.RuntimeParams["application_name"],
		Limit:      maxConns,
	})
	if err != nil {
		t.Fatal(err)
	}
	p := newPoolFor(t, cfg)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range rounds {
				err := withConn(p, func(c *Conn) error {
					ctx, cancel := context.WithTimeout(context.Background(), pgtest.AbandonAfter)
					defer cancel()
					_, err := c.Exec(ctx, "SELECT pg_sleep(1)")
					return err
				})
				if err == nil || !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("an abandoned pg_sleep(1) returned %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	report := checker.Stop()
	if report.Errors > 0 {
		t.Errorf("%d samples of pg_stat_activity failed, the last: %v", report.Errors, report.LastErr)
	}
	if len(report.Samples) == 0 {
		t.Fatal("no sample of pg_stat_activity")
	}
	t.Logf("%d samples, at most %d of the pool's connections at the server; %d dials", len(report.Samples), report.Max, p.Stat().Shoal().Dials)
	for _, s := range report.Over {
		t.Errorf("%s: the server held %d of the pool's connections, MaxConns is %d", s.At.Format("15:04:05.000"), s.Count, maxConns)
	}
}

// TestParsedConnConfigOutsideThePool: a ConnConfig from ParseConfig given
// to pgx.ConnectConfig cancels as pgx's default does (docs/postgres.md): a
// statement cut short at its deadline returns with the context's error and
// closes the connection, where the pool's own connections send a cancel
// request and keep theirs.
func TestParsedConnConfigOutsideThePool(t *testing.T) {
	cfg, err := ParseConfig(pgtest.ConnString(t))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.ConnectConfig(pgtest.Ctx(t), cfg.ConnConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	ctx, cancel := context.WithTimeout(pgtest.Ctx(t), 100*time.Millisecond)
	defer cancel()
	_, err = conn.Exec(ctx, "SELECT pg_sleep(2)") // the backend sleeps on alone for at most 2s
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a statement past its deadline returned %v, want context.DeadlineExceeded", err)
	}
	if !conn.IsClosed() {
		t.Fatal("the connection is open after its statement was cut short: pgx's default closes it")
	}
}
