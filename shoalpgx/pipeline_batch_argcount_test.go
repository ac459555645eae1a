package shoalpgx

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// batchSender is what a batch goes through: a pgx.Conn, whose SendBatch
// pgxpool's is, and a shoalpgx pool.
type batchSender interface {
	SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
}

// A batch holding a statement given more or fewer arguments than it has
// parameters fails, with pipelining on, in the words pgx's fails with, on
// the statement's first run on a shared connection as on the runs after
// it: in QueryExecModeCacheStatement the whole batch fails before anything
// runs, "error preprocessing batch (build): mismatched param and argument
// count", also the statement queued ahead of the wrong one, whether it
// would have run or failed (the wrong one then skipped by the server); in
// QueryExecModeExec the server refuses it in its own words. Each batch has
// its own SQL, so that its first run is its statement's first on the
// connection.
func TestPipelineBatchWrongArgumentCountFailsAsInPgx(t *testing.T) {
	inWrongCountModes(t, func(t *testing.T, s *wrongCountSetup) {
		ctx := pgtest.Ctx(t)
		for _, args := range [][]any{{1, 2}, {}} {
			for _, ahead := range []string{"", "select 1", "select 1/0"} {
				sql := fmt.Sprintf("select $1::int /* %d arguments, ahead: %q */", len(args), ahead)
				for run := 1; run <= 3; run++ {
					want := wrongCountBatch(ctx, s.ref, ahead, sql, args)
					if s.ref.IsClosed() {
						// pgx closes its connection when a
						// statement fails to build after another
						// was queued; the next run gets a new one.
						s.reconnect(t)
					}
					if !strings.Contains(want, "argument count") && !strings.Contains(want, "parameters, but") && !strings.Contains(want, "division by zero") {
						t.Fatalf("pgx's batch failed otherwise (%s): the test proves nothing", want)
					}
					for _, p := range s.pools {
						if got := wrongCountBatch(ctx, p.p, ahead, sql, args); got != want {
							t.Errorf("%d arguments, ahead: %q, %s, run %d:\n     got %s\n    want %s (pgx's)", len(args), ahead, p.name, run, got, want)
						}
					}
				}
			}
		}
	})
}

// wrongCountBatch sends a batch of sql with args, after the statement ahead
// unless it is "", and returns what its caller sees: each Exec's error,
// then Close's.
func wrongCountBatch(ctx context.Context, p batchSender, ahead, sql string, args []any) string {
	b := &pgx.Batch{}
	if ahead != "" {
		b.Queue(ahead)
	}
	b.Queue(sql, args...)
	br := p.SendBatch(ctx, b)
	var seen []string
	for range b.QueuedQueries {
		_, err := br.Exec()
		seen = append(seen, fmt.Sprintf("Exec: %v", err))
	}
	return fmt.Sprintf("%s; Close: %v", strings.Join(seen, "; "), br.Close())
}

// A pipelined batch failed for a wrong argument count on its first run
// leaves nothing done, as pgx's, whose statement ahead reaches the server
// only as pgx closes its connection without a Sync: its statement ahead,
// which the server ran, is rolled back with the batch's implicit
// transaction, and its result says so.
func TestPipelineBatchWrongArgumentCountLeavesNothingDone(t *testing.T) {
	ctx := pgtest.Ctx(t)
	table := pipeTable(t, "pipe_batch_count", "n int")
	p := newPipelinedPool(t, 2, 4, func(c *Config) {
		c.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	})
	b := &pgx.Batch{}
	b.Queue("insert into " + table + " values (1)")
	b.Queue("select $1::int /* left undone */", 1, 2)
	br := p.SendBatch(ctx, b)
	if _, err := br.Exec(); err == nil || !strings.Contains(err.Error(), "mismatched param and argument count") {
		t.Errorf("the insert ahead: %v, want the batch's argument count error", err)
	}
	_ = br.Close()
	var n int
	if err := p.QueryRow(ctx, "select count(*) from "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d rows inserted by a batch that failed, want none", n)
	}
}
