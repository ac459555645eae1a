package shoalpgx

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A lone caller's pipelined QueryRow and Exec reuse their requests: what
// is left per statement is the rows QueryRow returns, pgx's encoding of the
// argument and the lone caller's watch on its context while it reads
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
	row := testing.AllocsPerRun(200, func() {
		if err := p.QueryRow(ctx, "select $1::int", 7).Scan(&n); err != nil || n != 7 {
			t.Fatal(n, err)
		}
	})
	exec := testing.AllocsPerRun(200, func() {
		if _, err := p.Exec(ctx, "select $1::int", 7); err != nil {
			t.Fatal(err)
		}
	})
	// Without reuse: 4 more each.
	if row > 7 || exec > 5 {
		t.Fatalf("allocations per statement: QueryRow %v (want <= 7), Exec %v (want <= 5)", row, exec)
	}
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
}

// QueryRow refuses *pgtype.DriverBytes with pipelining as pgx does without:
// the row's values are gone once Scan returns.
func TestPipelineRowRefusesDriverBytes(t *testing.T) {
	for _, depth := range []int{0, 16} {
		p := newTestPool(t, func(c *Config) { c.MaxConns = 4; c.Pipeline = depth })
		var b pgtype.DriverBytes
		err := p.QueryRow(pgtest.Ctx(t), "select 'abc'::bytea").Scan(&b)
		if err == nil || err.Error() != "cannot scan into *pgtype.DriverBytes from QueryRow" {
			t.Fatalf("Pipeline %d: %v, want pgx's refusal", depth, err)
		}
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
