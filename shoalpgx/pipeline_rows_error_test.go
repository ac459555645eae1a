package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// failsOnRow3 sends two rows, then fails with a division by zero.
const failsOnRow3 = "select 10/(3-g) from generate_series(1, 5) g"

// seenRows is what a caller of Query sees: Query's error, the rows Next
// gives, and Err once Next is done.
func seenRows(rows pgx.Rows, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Query: %v; rows:", err)
	for i := 0; i < 10 && rows.Next(); i++ {
		var n int
		if serr := rows.Scan(&n); serr != nil {
			fmt.Fprintf(&b, " scan %v", serr)
			break
		}
		fmt.Fprintf(&b, " %d", n)
	}
	fmt.Fprintf(&b, "; Err: %v", rows.Err())
	return b.String()
}

// A pipelined Query whose statement fails while it runs gives what pgx's
// gives: no error from Query, the rows sent before the error, then the
// error from Err. Its Parse failing (a syntax error) is Query's error in
// both. In a batch, the failing statement's Query is the same, and the
// statements after it fail with its error. Each case runs twice: unnamed,
// then by name on the shared connection; the same on a whole connection of
// the pool is what pgx does.
func TestPipelineErrorWhileRunningComesAfterTheRows(t *testing.T) {
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeExec, pgx.QueryExecModeCacheDescribe, pgx.QueryExecModeDescribeExec} {
		t.Run(mode.String(), func(t *testing.T) { errorsComeAsInPgx(t, mode) })
	}
}

// errorsComeAsInPgx is TestPipelineErrorWhileRunningComesAfterTheRows in
// one QueryExecMode, the pool's default.
func errorsComeAsInPgx(t *testing.T, mode pgx.QueryExecMode) {
	piped := newPipelinedPool(t, 4, 4, func(c *Config) { c.ConnConfig.DefaultQueryExecMode = mode })
	ctx := pgtest.Ctx(t)
	whole, err := piped.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Release()
	type querier interface {
		Query(context.Context, string, ...any) (pgx.Rows, error)
		QueryRow(context.Context, string, ...any) pgx.Row
		SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
	}
	cases := []struct {
		name string
		run  func(p querier) string
	}{
		{"query", func(p querier) string { return seenRows(p.Query(ctx, failsOnRow3)) }},
		{"query with an argument", func(p querier) string {
			return seenRows(p.Query(ctx, "select 10/($1::int-g) from generate_series(1, 5) g", 3))
		}},
		{"query failing at once", func(p querier) string { return seenRows(p.Query(ctx, "select 1/0")) }},
		{"query, syntax error", func(p querier) string { return seenRows(p.Query(ctx, "selec 1")) }},
		// Where: pgx words it itself, where it checks, and the shared
		// connection gives the server's in the describing modes.
		{"query, an argument too many", func(p querier) string {
			rows, err := p.Query(ctx, "select 1", 1)
			for rows.Next() {
			}
			return fmt.Sprintf("Query failed: %v; Err: %v", err != nil, rows.Err() != nil)
		}},
		{"query row", func(p querier) string {
			var n int
			err := p.QueryRow(ctx, "select 10/(2-g) from generate_series(1, 5) g").Scan(&n)
			return fmt.Sprintf("%d, %v", n, err)
		}},
		{"batch", func(p querier) string {
			b := &pgx.Batch{}
			b.Queue("select 1")
			b.Queue(failsOnRow3)
			b.Queue("select 2")
			br := p.SendBatch(ctx, b)
			_, err1 := br.Exec()
			s := seenRows(br.Query())
			_, err3 := br.Exec()
			return fmt.Sprintf("%v; %s; %v; Close: %v", err1, s, err3, br.Close())
		}},
		{"batch callback", func(p querier) string {
			b := &pgx.Batch{}
			var s string
			b.Queue(failsOnRow3).Query(func(rows pgx.Rows) error {
				s = seenRows(rows, nil)
				return rows.Err()
			})
			return fmt.Sprintf("%s; Close: %v", s, p.SendBatch(ctx, b).Close())
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for range 2 {
				want := c.run(whole)
				shared := piped.Stat().Pipelined().Acquires
				got := c.run(piped)
				mustHaveShared(t, c.name, piped.Stat().Pipelined().Acquires-shared)
				if got != want {
					t.Fatalf("pipelined: %s\n       pgx: %s", got, want)
				}
			}
		})
	}
	// The error is the server's, with its SQLSTATE.
	rows, err := piped.Query(ctx, failsOnRow3)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	var pgErr *pgconn.PgError
	if !errors.As(rows.Err(), &pgErr) || pgErr.Code != "22012" {
		t.Fatalf("Err: %v", rows.Err())
	}
}
