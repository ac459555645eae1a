package shoalpgx

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A pipelined batch whose implicit commit fails (a deferred constraint)
// gives that error to every statement's result and to Close, as the
// package doc says: none of its work was committed. pgx gives it to Close
// alone, after each statement's own result; the difference is owned to,
// and this test holds the pool to it.
func TestPipelineBatchCommitFailureIsEveryStatementsError(t *testing.T) {
	p := newPipelinedPool(t, 4, 8, nil)
	ctx := pgtest.Ctx(t)
	table := pipeTable(t, "pipe_batch_deferred", "id bigint, constraint pipe_batch_deferred_u unique (id) deferrable initially deferred")
	for i := range 2 { // unnamed, then by name
		b := &pgx.Batch{}
		b.Queue("insert into "+table+" values ($1)", 7)
		b.Queue("insert into "+table+" values ($1)", 7)
		b.Queue("select $1::int", 7)
		br := p.SendBatch(ctx, b)
		if _, ok := br.(*pipeBatchResults); !ok {
			t.Fatalf("batch not pipelined: %T", br)
		}
		_, err1 := br.Exec()
		_, err2 := br.Exec()
		err3 := br.QueryRow().Scan(new(int))
		errClose := br.Close()
		for what, err := range map[string]error{"first insert": err1, "second insert": err2, "select": err3, "Close": errClose} {
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
				t.Errorf("run %d, %s: %v, want the commit's SQLSTATE 23505", i+1, what, err)
			}
		}
	}
	var n int
	if err := p.QueryRow(ctx, "select count(*) from "+table).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows after the failed commits (%v), want 0", n, err)
	}
}
