package shoalpgx

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// In pgx's CacheDescribe and DescribeExec modes a statement is described
// before it runs, and each argument encoded as its parameter's type: a
// byte slice for a text column stores its bytes, json takes it, and a map
// goes to jsonb as JSON. With pipelining those modes give the same, as the
// default mode does, whether the mode is the pool's or a statement's:
// before, such a statement ran unnamed on a shared connection, its
// arguments typed by their Go types, and a text column stored the bytes'
// hex form ("\x6869" for "hi").
func TestPipelineDescribeModesEncodeAsTheParameter(t *testing.T) {
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheDescribe, pgx.QueryExecModeDescribeExec} {
		for _, where := range []string{"the pool's default", "a statement's argument"} {
			t.Run(fmt.Sprintf("%v, %s", mode, where), func(t *testing.T) {
				p := newPipelinedPool(t, 2, 8, func(c *Config) {
					if where == "the pool's default" {
						c.ConnConfig.DefaultQueryExecMode = mode
					}
				})
				var opts []any
				if where != "the pool's default" {
					opts = []any{mode}
				}
				ctx := pgtest.Ctx(t)
				table := pipeTable(t, "pipe_describemode", storedColumns)
				insert := "insert into " + table + " (n, t, j, jb, b) values ($1, $2, $3, $4, $5)"
				for i := range 2 {
					args := append(append([]any{}, opts...), i, []byte("hi"), json.RawMessage(`{"a":1}`), map[string]any{"a": 1}, awkwardBytes)
					if _, err := p.Exec(ctx, insert, args...); err != nil {
						t.Fatalf("run %d: %v", i+1, err)
					}
				}
				var s string
				if err := p.QueryRow(ctx, "select $1::text || '!'", append(append([]any{}, opts...), []byte("hi"))...).Scan(&s); err != nil || s != "hi!" {
					t.Errorf("QueryRow: %q, %v; want %q", s, err, "hi!")
				}
				wantStoredRows(t, p, table, 2)
				if where == "the pool's default" {
					// A batch runs in the pool's mode.
					b := &pgx.Batch{}
					b.Queue("select length($1::text)", []byte("four"))
					var n int
					br := p.SendBatch(ctx, b)
					if err := br.QueryRow().Scan(&n); err != nil || n != 4 {
						t.Errorf("a batch: length %d, %v; want 4", n, err)
					}
					if err := br.Close(); err != nil {
						t.Errorf("closing the batch: %v", err)
					}
				}
			})
		}
	}
}
