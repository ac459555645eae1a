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
	ctx := pgtest.Ctx(t)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeExec} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg, err := pgx.ParseConfig(pgtest.ConnString(t))
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = mode
			ref, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer ref.Close(ctx)
			setMode := func(c *Config) { c.ConnConfig.DefaultQueryExecMode = mode }
			pools := []struct {
				name string
				p    argCountCaller
			}{
				{"pipelining off", newTestPool(t, func(c *Config) { setMode(c); c.Pipeline = 0 })},
				{"pool_pipeline=4", newPipelinedPool(t, 4, 4, setMode)},
			}
			for _, args := range [][]any{{1, 2}, {}} {
				for _, kind := range []string{"Query", "QueryRow", "Exec"} {
					sql := fmt.Sprintf("select $1::int /* %s, %d arguments */", kind, len(args))
					for run := 1; run <= 3; run++ {
						want := wrongCountCall(ctx, ref, kind, sql, args)
						for _, p := range pools {
							if got := wrongCountCall(ctx, p.p, kind, sql, args); got != want {
								t.Errorf("%s, %d arguments, %s, run %d:\n     got %s\n    want %s (pgx's)", kind, len(args), p.name, run, got, want)
							}
						}
					}
				}
			}
		})
	}
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
