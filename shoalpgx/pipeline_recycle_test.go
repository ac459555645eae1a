package shoalpgx

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A lone caller's pipelined Query, QueryRow and Exec reuse their requests:
// what is left per statement is the rows, pgx's encoding of the argument
// and the lone caller's watch on its context while it reads
// (pipeConn.readFor), not the request, its buffer, its wake-up channel and
// its encoder's state.
func TestPipelineStatementsReuseTheirRequests(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates, and makes a sync.Pool drop requests")
	}
	p := newTestPool(t, func(c *Config) { c.MaxConns = 4; c.Pipeline = 16 })
	ctx := pgtest.Ctx(t)
	var n int
	if err := p.QueryRow(ctx, "select $1::int", 1).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exec(ctx, "select $1::int", 1); err != nil {
		t.Fatal(err)
	}
	row := least(t, p, func() float64 {
		return testing.AllocsPerRun(200, func() {
			if err := p.QueryRow(ctx, "select $1::int", 7).Scan(&n); err != nil || n != 7 {
				t.Fatal(n, err)
			}
		})
	})
	exec := least(t, p, func() float64 {
		return testing.AllocsPerRun(200, func() {
			if _, err := p.Exec(ctx, "select $1::int", 7); err != nil {
				t.Fatal(err)
			}
		})
	})
	query := least(t, p, func() float64 {
		return testing.AllocsPerRun(200, func() {
			rows, err := p.Query(ctx, "select $1::int", 7)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				if err := rows.Scan(&n); err != nil || n != 7 {
					t.Fatal(n, err)
				}
			}
			if rows.Err() != nil {
				t.Fatal(rows.Err())
			}
		})
	})
	// Without reuse: 4 more each.
	if row > 7 || exec > 5 || query > 7 {
		t.Fatalf("allocations per statement: QueryRow %v (want <= 7), Exec %v (want <= 5), Query %v (want <= 7)", row, exec, query)
	}
	// QueryRow's rows live in the request too: beyond what Exec of the
	// same statement allocates, QueryRow allocates only the row, a
	// pointer and an error (32 bytes; the bound leaves room for what the
	// process allocates meanwhile), where rows of their own take 416.
	bytesPer := func(run func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 200 {
			run()
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / 200
	}
	rowBytes := least(t, p, func() uint64 {
		return bytesPer(func() {
			if err := p.QueryRow(ctx, "select $1::int", 7).Scan(&n); err != nil || n != 7 {
				t.Fatal(n, err)
			}
		})
	})
	execBytes := least(t, p, func() uint64 {
		return bytesPer(func() {
			if _, err := p.Exec(ctx, "select $1::int", 7); err != nil {
				t.Fatal(err)
			}
		})
	})
	if rowBytes > execBytes+160 {
		t.Fatalf("QueryRow allocates %d bytes a statement and Exec %d: want at most 160 more for the row", rowBytes, execBytes)
	}
}

// least returns the smallest of three rounds of measure, each begun with
// no shared connection being dialled: what a statement costs, without a
// connect (about 60 KB) counted as its. The pool dials a connection ahead
// whenever every open one has a statement in flight (BusyStreams 1), which
// a lone caller's can be, so on a loaded machine a dial may still be under
// way as a round begins, or start during one.
func least[N float64 | uint64](t *testing.T, p *Pool, measure func() N) N {
	t.Helper()
	var m N
	for i := range 3 {
		pgtest.WaitFor(t, 10*time.Second, "no shared connection being dialled", func() bool { return p.Stat().Pipelined().Dialing == 0 })
		if got := measure(); i == 0 || got < m {
			m = got
		}
	}
	return m
}

// A QueryRow's row, once scanned, has given its request to the next
// statement: scanning it again finds no row, as pgx's does, and never the
// answer of a statement that reused the request.
func TestPipelineRowScannedTwiceSeesNoOtherAnswer(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 4; c.Pipeline = 16 })
	ctx := pgtest.Ctx(t)
	first := p.QueryRow(ctx, "select $1::int", 1)
	var n int
	if err := first.Scan(&n); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	for i := 2; i < 20; i++ {
		if err := p.QueryRow(ctx, "select $1::int", i).Scan(&n); err != nil || n != i {
			t.Fatal(n, err)
		}
		n = 0
		if err := first.Scan(&n); !errors.Is(err, pgx.ErrNoRows) || n != 0 {
			t.Fatalf("the first row scanned again after statement %d: %d, %v; want pgx.ErrNoRows", i, n, err)
		}
	}
	// A row whose statement failed gives its error again.
	failed := p.QueryRow(ctx, "select 1/$1::int", 0)
	for i := range 2 {
		var pgErr *pgconn.PgError
		if err := failed.Scan(&n); !errors.As(err, &pgErr) || pgErr.Code != "22012" {
			t.Fatalf("a failed row scanned (%d): %v, want division_by_zero", i+1, err)
		}
		if err := p.QueryRow(ctx, "select $1::int", i).Scan(&n); err != nil || n != i {
			t.Fatal(n, err)
		}
	}
}

// Closed rows keep their command tag, columns and error while their
// request serves the next statements.
func TestPipelineClosedRowsKeepTheirTag(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 2; c.Pipeline = 16 })
	ctx := pgtest.Ctx(t)
	rows, err := p.Query(ctx, "select g as first from generate_series(1, $1::int) g", 3)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	// Its error comes from the rows, as pgx's does: it fails running.
	failed, err := p.Query(ctx, "select 1/$1::int as second", 0)
	if err != nil {
		t.Fatal(err)
	}
	for failed.Next() {
	}
	for i := range 20 {
		if _, err := p.Exec(ctx, "select $1::int", i); err != nil {
			t.Fatal(err)
		}
	}
	fields := rows.FieldDescriptions()
	if got := rows.CommandTag().String(); got != "SELECT 3" || len(fields) != 1 || fields[0].Name != "first" || rows.Err() != nil || rows.RawValues() != nil {
		t.Fatalf("closed rows: tag %q, fields %v, err %v, raw %v; want SELECT 3, first, nil, nil", got, fields, rows.Err(), rows.RawValues())
	}
	var pgErr *pgconn.PgError
	if !errors.As(failed.Err(), &pgErr) || pgErr.Code != "22012" {
		t.Fatalf("failed rows: %v, want division_by_zero", failed.Err())
	}
}

// QueryRow refuses *pgtype.DriverBytes with pipelining as pgx does without:
// the row's values are gone once Scan returns.
func TestPipelineRowRefusesDriverBytes(t *testing.T) {
	const refusal = "cannot scan into *pgtype.DriverBytes from QueryRow"
	for _, depth := range []int{0, 16} {
		p := newTestPool(t, func(c *Config) { c.MaxConns = 4; c.Pipeline = depth })
		ctx := pgtest.Ctx(t)
		var b pgtype.DriverBytes
		row := p.QueryRow(ctx, "select 'abc'::bytea")
		if err := row.Scan(&b); err == nil || err.Error() != refusal {
			t.Fatalf("Pipeline %d: %v, want pgx's refusal", depth, err)
		}
		// Scanned again: the refusal again, and no row for another
		// destination, as pgx's row does.
		if err := row.Scan(&b); err == nil || err.Error() != refusal {
			t.Fatalf("Pipeline %d, scanned again: %v, want pgx's refusal", depth, err)
		}
		var s []byte
		if err := row.Scan(&s); !errors.Is(err, pgx.ErrNoRows) {
			t.Fatalf("Pipeline %d, scanned again into []byte: %v, want pgx.ErrNoRows", depth, err)
		}
		// Before a failed statement's error, which comes at the next Scan.
		row = p.QueryRow(ctx, "select 1/$1::int", 0)
		if err := row.Scan(&b); err == nil || err.Error() != refusal {
			t.Fatalf("Pipeline %d, a failed statement: %v, want pgx's refusal", depth, err)
		}
		var n int
		if err := row.Scan(&n); err == nil {
			t.Fatalf("Pipeline %d, a failed statement scanned again: no error", depth)
		}
	}
}

// keptRows is a pgx.RowScanner that keeps the rows it is handed.
type keptRows struct {
	rows pgx.Rows
	n    int32
}

func (k *keptRows) ScanRow(rows pgx.Rows) error {
	k.rows = rows
	return rows.Scan(&k.n)
}

// The rows a pgx.RowScanner was handed by a pipelined QueryRow's Scan stay
// its own, closed, while other statements run: reading them never shows
// another statement's answer, and closing them closes nobody else's.
// (pgx's own QueryRow hands out its connection's reused rows, which the
// connection's next statement takes over.)
func TestPipelineRowScannerMayKeepTheRows(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 2; c.Pipeline = 16 })
	ctx := pgtest.Ctx(t)
	var k keptRows
	if err := p.QueryRow(ctx, "select $1::int as kept", 7).Scan(&k); err != nil || k.n != 7 {
		t.Fatalf("%d, %v", k.n, err)
	}
	var n int
	for i := range 20 {
		if err := p.QueryRow(ctx, "select $1::int as other", i).Scan(&n); err != nil || n != i {
			t.Fatal(n, err)
		}
	}
	fields := k.rows.FieldDescriptions()
	if len(fields) != 1 || fields[0].Name != "kept" || k.rows.CommandTag().String() != "SELECT 1" || k.rows.Err() != nil || k.rows.Next() {
		t.Fatalf("the kept rows show fields %v, tag %q, err %v; want kept, SELECT 1, nil, closed", fields, k.rows.CommandTag(), k.rows.Err())
	}
	row := p.QueryRow(ctx, "select $1::int", 8)
	k.rows.Close()
	if err := row.Scan(&n); err != nil || n != 8 {
		t.Fatalf("a row read after the kept rows' Close: %d, %v", n, err)
	}
}

// A statement run by name keeps the plans that scanned its last rows for
// the next: rows scanned into other types than the last rows' are planned
// anew, whichever caller scanned before.
func TestPipelineScanPlansFollowTheDestination(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 2; c.Pipeline = 16 })
	ctx := pgtest.Ctx(t)
	const sql = "select $1::int, $1::text"
	for i := range 40 {
		var err error
		var got string
		switch i % 4 {
		case 0:
			var a int32
			var b string
			err = p.QueryRow(ctx, sql, i).Scan(&a, &b)
			got = fmt.Sprint(a, " ", b)
		case 1:
			var a int64
			var b []byte
			err = p.QueryRow(ctx, sql, i).Scan(&a, &b)
			got = fmt.Sprint(a, " ", string(b))
		case 2:
			var a string
			var b pgtype.Text
			err = p.QueryRow(ctx, sql, i).Scan(&a, &b)
			got = fmt.Sprint(a, " ", b.String)
		case 3:
			var a float64
			var b *string
			err = p.QueryRow(ctx, sql, i).Scan(&a, &b)
			got = fmt.Sprint(a, " ", *b)
		}
		if want := fmt.Sprint(i, " ", i); err != nil || got != want {
			t.Fatalf("statement %d: %q, %v; want %q", i, got, err, want)
		}
	}
}
