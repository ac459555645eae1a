package shoalpgx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A mode whose cache the configuration disables (statement_cache_capacity=0
// with cache_statement, description_cache_capacity=0 with cache_describe)
// fails every statement in pgx, and so in the pool without pipelining. With
// pipelining it fails them the same, rather than run some shared and fail
// those that go to a whole connection: a setting means the same whichever
// connection a statement lands on. A statement that names another mode
// runs in both.
func TestPipelineDisabledCacheFailsAsPgx(t *testing.T) {
	for _, tc := range []struct {
		mode pgx.QueryExecMode
		off  func(*pgx.ConnConfig)
		want string
	}{
		{pgx.QueryExecModeCacheStatement, func(c *pgx.ConnConfig) { c.StatementCacheCapacity = 0 }, "disabled statement cache"},
		{pgx.QueryExecModeCacheDescribe, func(c *pgx.ConnConfig) { c.DescriptionCacheCapacity = 0 }, "disabled description cache"},
	} {
		for _, depth := range []int{0, 8} {
			t.Run(fmt.Sprintf("%v, pipeline %d", tc.mode, depth), func(t *testing.T) {
				p := newTestPool(t, func(c *Config) {
					c.MaxConns, c.Pipeline = 4, depth
					c.ConnConfig.DefaultQueryExecMode = tc.mode
					tc.off(c.ConnConfig)
				})
				ctx := pgtest.Ctx(t)
				failed := func(what string, err error) {
					t.Helper()
					if err == nil || !strings.Contains(err.Error(), tc.want) {
						t.Errorf("%s: %v, want pgx's %q", what, err, tc.want)
					}
				}
				var n int
				failed("QueryRow", p.QueryRow(ctx, "select $1::int", 1).Scan(&n))
				_, err := p.Exec(ctx, "select $1::int", 1)
				failed("Exec", err)
				rows, err := p.Query(ctx, "select $1::int", 1)
				if err == nil {
					rows.Close()
					err = rows.Err()
				}
				failed("Query", err)
				b := &pgx.Batch{}
				b.Queue("select $1::int", 1)
				br := p.SendBatch(ctx, b)
				_, err = br.Exec()
				br.Close()
				failed("SendBatch", err)

				if err := p.QueryRow(ctx, "select $1::int", pgx.QueryExecModeExec, 7).Scan(&n); err != nil || n != 7 {
					t.Errorf("QueryRow in QueryExecModeExec: %d, %v; want 7", n, err)
				}
			})
		}
	}
}
