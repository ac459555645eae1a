package shoalpgx

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A slice and a time.Duration are encoded as their parameter's type on a
// statement's first run on a shared connection, as pgx's default mode and
// the runs by name after it encode them: a slice for json or jsonb as
// JSON, for an array as its elements; a Duration for bigint as its
// nanoseconds, for interval as an interval. Their Go types name an array
// and an interval, which, sent as such, json and bigint refuse.
func TestPipelineSliceAndDurationFirstRun(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	table := pipeTable(t, "pipe_slices", "n int, jb jsonb, a text[], d bigint, iv interval")
	insert := "insert into " + table + " (n, jb, a, d, iv) values ($1, $2, $3, $4, $5)"
	tags := []string{"a", "b"}
	const d = 1500 * time.Millisecond
	for i := range 3 {
		if _, err := p.Exec(ctx, insert, i, tags, tags, d, d); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
	}
	rows, err := p.Query(ctx, "select n, jb::text, a::text, d, iv::text from "+table+" order by n")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		N     int
		JB, A string
		D     int64
		IV    string
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d rows, want 3", len(got))
	}
	want := row{JB: `["a", "b"]`, A: "{a,b}", D: int64(d), IV: "00:00:01.5"}
	for _, r := range got {
		if want.N = r.N; r != want {
			t.Errorf("run %d stored %+v, want %+v", r.N+1, r, want)
		}
	}

	// A pointer to a slice, alone in its statement, as the slice.
	for i := range 2 {
		var j string
		if err := p.QueryRow(ctx, "select $1::json::text", &tags).Scan(&j); err != nil || j != `["a","b"]` {
			t.Errorf("a pointer to a slice for json, run %d: %q, %v; want %q", i+1, j, err, `["a","b"]`)
		}
	}
}
