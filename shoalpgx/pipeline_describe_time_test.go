package shoalpgx

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A time.Time outside UTC stored in a timestamp or a date column through a
// shared connection stores what pgx stores: its wall clock and its own
// day. Sent in text, as on a statement's first, unnamed run, pgx writes it
// in UTC, and the column, which drops the zone, would keep the UTC wall
// clock instead (an hour early here, and the day before). Each insert is a
// statement's first run on a fresh pool's shared connection.
func TestPipelineTimeOutsideUTCStoresItsWallClock(t *testing.T) {
	ctx := pgtest.Ctx(t)
	setup := newTestPool(t, func(c *Config) { c.MaxConns = 2 })
	if _, err := setup.Exec(ctx, "create table pipe_time_h1 (ts timestamp, d date)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = setup.Exec(pgtest.Ctx(t), "drop table pipe_time_h1") })
	at := time.Date(2020, 1, 2, 0, 30, 0, 0, time.FixedZone("UTC+1", 3600))
	for _, ptr := range []bool{false, true} {
		for _, depth := range []int{0, 4} {
			// A subtest each, so that each pool closes before the next
			// opens.
			t.Run(fmt.Sprintf("pipeline %d, pointer %v", depth, ptr), func(t *testing.T) {
				p := newTestPool(t, func(c *Config) { c.MaxConns = 4; c.Pipeline = depth })
				var arg any = at
				if ptr {
					arg = &at
				}
				if _, err := p.Exec(ctx, "insert into pipe_time_h1 values ($1, $2)", arg, arg); err != nil {
					t.Fatal(err)
				}
				var ts, d string
				if err := p.QueryRow(ctx, "delete from pipe_time_h1 returning ts::text, d::text").Scan(&ts, &d); err != nil {
					t.Fatal(err)
				}
				if ts != "2020-01-02 00:30:00" || d != "2020-01-02" {
					t.Fatalf("stored %s and %s, want 2020-01-02 00:30:00 and 2020-01-02, as pgx", ts, d)
				}
			})
		}
	}
}

// Only a time whose wall clock differs from UTC's waits for a description:
// one in a zone of offset 0 (time.Now() on a machine set to UTC, whose
// Location is time.Local) goes as it is, with the rest of its statement.
func TestDescribesOnlyATimeOffUTC(t *testing.T) {
	tm := &typeMap{m: pgtype.NewMap()}
	at := time.Date(2020, 1, 2, 0, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		arg  any
		want bool
	}{
		{at, false},
		{at.In(time.FixedZone("here", 0)), false},
		{at.In(time.FixedZone("UTC+1", 3600)), true},
		{new(at.In(time.FixedZone("UTC+1", 3600))), true},
		{(*time.Time)(nil), false},
	} {
		if got := tm.describes([]any{c.arg}); got != c.want {
			t.Errorf("describes(%v) = %v, want %v", c.arg, got, c.want)
		}
	}
}

// A time.Time in UTC goes as it is on a statement's first run on a shared
// connection, which the package doc owns to: a text parameter stores it
// as the timestamp pgx writes for an unnamed statement, and from the next
// run, by name, as pgx's default mode stores it, in Go's String form.
func TestPipelineTimeInUTCForTextDiffersOnTheFirstRunOnly(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	at := time.Date(2024, 1, 2, 23, 4, 5, 0, time.UTC)
	var got []string
	for range 3 {
		var s string
		if err := p.QueryRow(ctx, "select $1::text", at).Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	const first, pgx = "2024-01-02 23:04:05Z", "2024-01-02 23:04:05 +0000 UTC"
	if got[0] != first || got[1] != pgx || got[2] != pgx {
		t.Fatalf("stored %q, want %q, then %q as pgx stores it", got, first, pgx)
	}
}
