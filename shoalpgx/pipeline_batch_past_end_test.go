package shoalpgx

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// Reading a pipelined batch past its last result fails that read, as
// pgx's does, and nothing else: the batch ran, and its Close says so, as
// on a whole connection.
func TestPipelineBatchReadPastTheEnd(t *testing.T) {
	p := newPipelinedPool(t, 4, 4, nil)
	ctx := pgtest.Ctx(t)
	b := &pgx.Batch{}
	b.Queue("select 1")
	br := p.SendBatch(ctx, b)
	if _, ok := br.(*pipeBatchResults); !ok {
		t.Fatalf("batch not pipelined: %T", br)
	}
	if _, err := br.Exec(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := br.Exec(); err == nil || err.Error() != "no more results in batch" {
			t.Fatalf("Exec past the end: %v", err)
		}
	}
	if err := br.Close(); err != nil {
		t.Fatalf("Close after a read past the end: %v, want nil as pgx's", err)
	}
}
