package shoalpgx

import (
	"fmt"
	"testing"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// A float32 stored in a float8 column through a shared connection stores
// what pgx stores, the float32 widened (0.1 becomes 0.10000000149011612),
// on a statement's first run as on the next ones. Sent in text, as on the
// first, unnamed run, pgx writes its shortest decimal form, and the column
// would keep 0.1 on each connection's first run and the widened value
// after.
func TestPipelineFloat32StoresAsPgx(t *testing.T) {
	ctx := pgtest.Ctx(t)
	setup := newTestPool(t, func(c *Config) { c.MaxConns = 2 })
	if _, err := setup.Exec(ctx, "create table pipe_float_h1 (f float8)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = setup.Exec(pgtest.Ctx(t), "drop table pipe_float_h1") })
	want := float64(float32(0.1))
	for _, depth := range []int{0, 4} {
		// A subtest each, so that each pool closes before the next opens.
		t.Run(fmt.Sprintf("pipeline %d", depth), func(t *testing.T) {
			p := newTestPool(t, func(c *Config) { c.MaxConns = 4; c.Pipeline = depth })
			if _, err := p.Exec(ctx, "insert into pipe_float_h1 values ($1)", float32(0.1)); err != nil {
				t.Fatal(err)
			}
			var f float64
			if err := p.QueryRow(ctx, "delete from pipe_float_h1 returning f").Scan(&f); err != nil {
				t.Fatal(err)
			}
			if f != want {
				t.Fatalf("stored %v, want %v, as pgx", f, want)
			}
		})
	}
}
