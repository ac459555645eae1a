package shoalpgx

import (
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A pipelined batch that fails to build after a statement was queued ahead
// of the failing one (a wrong argument count, an argument nothing encodes)
// fails alone: its shared connection stays open, the same backend, and the
// callers sharing it meanwhile get their answers. pgx closes its connection
// there, its queued statements unsynced, as docs/postgres.md says.
func TestPipelineBatchFailingToBuildKeepsItsSharedConnection(t *testing.T) {
	ctx := pgtest.Ctx(t)
	failing := []struct {
		name string
		sql  string
		args []any
	}{
		{"more arguments than parameters", "select $1::int /* keep, count */", []any{1, 2}},
		{"an argument nothing encodes", "select $1::int /* keep, chan */", []any{make(chan int)}},
	}
	batch := func(i int) *pgx.Batch {
		b := &pgx.Batch{}
		b.Queue("select 1")
		b.Queue(failing[i].sql, failing[i].args...)
		return b
	}

	for i, f := range failing {
		ref, err := pgx.Connect(ctx, pgtest.ConnString(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := ref.SendBatch(ctx, batch(i)).Close(); err == nil {
			t.Fatalf("%s: pgx ran the batch: the test proves nothing", f.name)
		}
		if !ref.IsClosed() {
			t.Errorf("%s: pgx kept its connection, which docs/postgres.md says it closes", f.name)
			_ = ref.Close(ctx)
		}
	}

	p := newPipelinedPool(t, 2, 8, nil)
	c := oneSharedConn(t, p)
	pid := func() uint32 {
		var n uint32
		if err := p.QueryRow(ctx, "select pg_backend_pid()").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := pid()
	whole := p.core.Stats().Acquires

	const callers, each = 4, 50
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for g := range callers {
		wg.Go(func() {
			for j := range each {
				want := g*each + j
				var n int
				if err := p.QueryRow(ctx, "select $1::int + 1 /* keep, callers */", want).Scan(&n); err != nil || n != want+1 {
					errs <- fmt.Errorf("caller %d, statement %d: %d, %v, want %d", g, j, n, err, want+1)
					return
				}
			}
		})
	}
	for run := 1; run <= 3; run++ { // the first run of each goes unnamed, the others by name
		for i, f := range failing {
			if err := p.SendBatch(ctx, batch(i)).Close(); err == nil {
				t.Errorf("%s, run %d: the batch succeeded", f.name, run)
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	if cs := p.pipe.conns(); len(cs) != 1 || cs[0] != c {
		t.Errorf("shared connections after the failed batches: %v, want the one before (%p)", cs, c)
	}
	if err := c.broken(); err != nil {
		t.Errorf("the shared connection broke: %v", err)
	}
	if after := pid(); after != before {
		t.Errorf("backend %d after the failed batches, want %d, the one before", after, before)
	}
	if n := p.core.Stats().Acquires; n != whole {
		t.Errorf("%d whole connections acquired: the batches were not pipelined", n-whole)
	}
}
