package shoalpgx

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// An argument that pgx cannot encode as its parameter's type (an int for a
// text parameter) fails every run of the statement on a whole connection.
// On a shared connection the statement's first run goes unnamed, its
// arguments in text for the server to type, and runs; every run after
// fails as pgx's does, in pgx's words, in every statement kind. It used to
// run on every other try: the failure by name made the connection forget
// the statement, whose next run went unnamed again.
func TestPipelineArgumentPgxCannotEncodeFailsAfterTheFirstRun(t *testing.T) {
	p := newPipelinedPool(t, 2, 8, nil)
	oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	whole, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Release()
	kinds := []struct {
		name string
		run  func(q statementRunner, sql string) error
	}{
		{"QueryRow", func(q statementRunner, sql string) error { return q.QueryRow(ctx, sql, 42).Scan(new(string)) }},
		{"Exec", func(q statementRunner, sql string) error { _, err := q.Exec(ctx, sql, 42); return err }},
		{"Query", func(q statementRunner, sql string) error {
			rows, err := q.Query(ctx, sql, 42)
			if err != nil {
				return err
			}
			rows.Close()
			return rows.Err()
		}},
		{"SendBatch", func(q statementRunner, sql string) error {
			b := &pgx.Batch{}
			b.Queue(sql, 42)
			return q.SendBatch(ctx, b).Close()
		}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			sql := fmt.Sprintf("select upper($1) /* %s */", k.name)
			want := k.run(whole, sql)
			if want == nil {
				t.Fatal("pgx encoded an int for a text parameter: the test proves nothing")
			}
			if err := k.run(p, sql); err != nil {
				t.Logf("first run: %v", err) // either is fine
			}
			for i := range 4 {
				if err := k.run(p, sql); err == nil || err.Error() != want.Error() {
					t.Fatalf("run %d: %v; pgx: %v", i+2, err, want)
				}
			}
		})
	}
}
