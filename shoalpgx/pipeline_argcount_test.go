package shoalpgx

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// argCountCaller is what a call with the wrong number of arguments goes
// through: a pgx.Conn, which pgxpool's calls run on, and a shoalpgx pool.
type argCountCaller interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
	Query(context.Context, string, ...any) (pgx.Rows, error)
	QueryRow(context.Context, string, ...any) pgx.Row
}

// A statement given more or fewer arguments than it has parameters fails,
// with pipelining on, in the words pgx's fails with (pgxpool's Query,
// QueryRow and Exec are its connection's, unchanged): from Query (and
// QueryRow's Scan, and Exec), on the first run on a connection and on the
// runs after it, when the statement is cached. Each kind of call has its
// own SQL, so that its first run is its statement's first on the
// connection.
func TestPipelineWrongArgumentCountFailsAsInPgx(t *testing.T) {
	inWrongCountModes(t, func(t *testing.T, s *wrongCountSetup) {
		ctx := pgtest.Ctx(t)
		for _, args := range [][]any{{1, 2}, {}} {
			for _, kind := range []string{"Query", "QueryRow", "Exec"} {
				sql := fmt.Sprintf("select $1::int /* %s, %d arguments */", kind, len(args))
				for run := 1; run <= 3; run++ {
					want := wrongCountCall(ctx, s.ref, kind, sql, args)
					for _, p := range s.pools {
						if got := wrongCountCall(ctx, p.p, kind, sql, args); got != want {
							t.Errorf("%s, %d arguments, %s, run %d:\n     got %s\n    want %s (pgx's)", kind, len(args), p.name, run, got, want)
						}
					}
				}
			}
		}
	})
}

// wrongCountSetup is what a test of wrong argument counts compares in one
// QueryExecMode: pgx's own connection, whose calls and batches pgxpool's
// are, and two shoalpgx pools, one never pipelined and one always.
type wrongCountSetup struct {
	cfg   *pgx.ConnConfig
	ref   *pgx.Conn // the one open at the test's end is closed then
	pools []comparedPool
}

// comparedPool is a shoalpgx pool compared with pgx, named for messages.
type comparedPool struct {
	name string
	p    *Pool
}

// inWrongCountModes runs test in a subtest per mode whose wrong argument
// counts fail differently: QueryExecModeCacheStatement, which knows a
// statement's parameters before it runs it, and QueryExecModeExec, which
// leaves the count to the server.
func inWrongCountModes(t *testing.T, test func(*testing.T, *wrongCountSetup)) {
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeExec} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg, err := pgx.ParseConfig(pgtest.ConnString(t))
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = mode
			s := &wrongCountSetup{cfg: cfg}
			s.reconnect(t)
			t.Cleanup(func() { _ = s.ref.Close(context.Background()) })
			setMode := func(c *Config) { c.ConnConfig.DefaultQueryExecMode = mode }
			s.pools = []comparedPool{
				// One connection: never pipelined, whatever
				// SHOAL_TEST_PIPELINE says. A pool pipelined
				// that way would start its readers after the
				// other pool's leak check took its baseline.
				{"pipelining off", newTestPool(t, func(c *Config) { setMode(c); c.MaxConns = 1 })},
				{"pool_pipeline=4", newPipelinedPool(t, 4, 4, setMode)},
			}
			test(t, s)
		})
	}
}

// reconnect opens pgx's connection, the first or one after pgx closed the
// last.
func (s *wrongCountSetup) reconnect(t *testing.T) {
	t.Helper()
	ref, err := pgx.ConnectConfig(pgtest.Ctx(t), s.cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.ref = ref
}

// wrongCountCall makes one call of kind and returns what its caller sees:
// the call's error, and for Query the rows' Err once Next is done.
func wrongCountCall(ctx context.Context, p argCountCaller, kind, sql string, args []any) string {
	switch kind {
	case "Query":
		rows, err := p.Query(ctx, sql, args...)
		for rows.Next() {
		}
		return fmt.Sprintf("Query: %v; Err: %v", err, rows.Err())
	case "QueryRow":
		var n int
		return fmt.Sprintf("Scan: %v", p.QueryRow(ctx, sql, args...).Scan(&n))
	default:
		_, err := p.Exec(ctx, sql, args...)
		return fmt.Sprintf("Exec: %v", err)
	}
}
