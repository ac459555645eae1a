package shoalpgx

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A batch with a COMMIT (alone, or ending a BEGIN) ahead of a statement
// given the wrong number of arguments fails and leaves behind what pgx's
// leaves, with pipelining on. pgx fails every result before reading an
// answer, but the statements it had queued still reach the server as it
// closes its connection without a Sync: what a COMMIT ended stays
// committed, and the rest is rolled back. A COMMIT never shares a
// connection, so the pool hands that batch to pgx; the batch without one
// is pipelined, and rolled back whole as pgx's.
func TestPipelineBatchCommitAheadOfWrongArgumentCountAsInPgx(t *testing.T) {
	ctx := pgtest.Ctx(t)
	table := pipeTable(t, "pipe_batch_commit_ahead", "n int")
	admin := pgtest.AdminConn(t)
	count := func() int {
		var n int
		if err := admin.QueryRow(ctx, "select count(*) from "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	insert := "insert into " + table + " values (1)"
	aheads := [][]string{{insert, "COMMIT"}, {"BEGIN", insert, "COMMIT"}, {insert, "COMMIT", insert}, {insert}}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeExec} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg, err := pgx.ParseConfig(pgtest.ConnString(t))
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = mode
			p := newPipelinedPool(t, 2, 4, func(c *Config) { c.ConnConfig.DefaultQueryExecMode = mode })
			for i, ahead := range aheads {
				sql := fmt.Sprintf("select $1::int /* %s, ahead %d */", mode, i)
				for run := 1; run <= 2; run++ {
					ref, err := pgx.ConnectConfig(ctx, cfg)
					if err != nil {
						t.Fatal(err)
					}
					want := commitAheadBatch(ctx, ref, ahead, sql)
					if ref.IsClosed() {
						<-ref.PgConn().CleanupDone() // what pgx queued has reached the server
					} else if err := ref.Close(ctx); err != nil {
						t.Fatal(err)
					}
					wantRows := count()
					if strings.Contains(want, "Close: <nil>") {
						t.Fatalf("ahead %q: pgx's batch succeeded (%s): the test proves nothing", ahead, want)
					}
					if _, err := admin.Exec(ctx, "delete from "+table); err != nil {
						t.Fatal(err)
					}

					whole := p.core.Stats().Acquires
					got := commitAheadBatch(ctx, p, ahead, sql)
					if got != want {
						t.Errorf("ahead %q, run %d:\n     got %s\n    want %s (pgx's)", ahead, run, got, want)
					}
					if wantRows > 0 {
						// A batch pgx ran on a whole connection the
						// pool then closed: its rows come as the
						// server reads what pgx queued.
						pgtest.WaitFor(t, 10*time.Second, fmt.Sprintf("%d rows, as pgx's, after ahead %q", wantRows, ahead), func() bool { return count() == wantRows })
					} else if p.core.Stats().Acquires != whole {
						t.Fatalf("ahead %q: batch not pipelined, so its rows may still come", ahead)
					} else if n := count(); n != 0 {
						t.Errorf("ahead %q, run %d: %d rows, want none, as pgx's", ahead, run, n)
					}
					if _, err := admin.Exec(ctx, "delete from "+table); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

// commitAheadBatch sends the statements ahead, then sql given two
// arguments for its one parameter, and returns what its caller sees (each
// Exec's error, then Close's).
func commitAheadBatch(ctx context.Context, p batchSender, ahead []string, sql string) string {
	b := &pgx.Batch{}
	for _, s := range ahead {
		b.Queue(s)
	}
	b.Queue(sql, 1, 2)
	br := p.SendBatch(ctx, b)
	var seen []string
	for range b.QueuedQueries {
		_, err := br.Exec()
		seen = append(seen, fmt.Sprintf("Exec: %v", err))
	}
	return fmt.Sprintf("%s; Close: %v", strings.Join(seen, "; "), br.Close())
}
