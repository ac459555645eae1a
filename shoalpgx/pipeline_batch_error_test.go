package shoalpgx

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A batch that pgx fails before sending it (an argument it cannot encode
// as its parameter's type, more arguments than parameters) fails in pgx's
// words, with pipelining on and off: "error preprocessing batch (build):
// ..." where pgx describes the batch's statements first, the encoding's
// error alone in QueryExecModeExec. With pipelining on, a statement's first
// run on a shared connection goes unnamed, the server typing its arguments
// (TestPipelineArgumentPgxCannotEncodeFailsAfterTheFirstRun), so there an
// int for a text parameter does not fail the first run as pgx does; the
// runs after the first are compared in every case.
func TestBatchFailingToBuildFailsAsInPgx(t *testing.T) {
	type failure struct {
		name string
		sql  string
		args []any
		all  bool // the first pipelined run fails as pgx's too
	}
	chanArg := failure{"an argument nothing encodes", "select $1::int + 1 /* chan */", []any{make(chan int)}, true}
	modes := []struct {
		mode     pgx.QueryExecMode
		failures []failure
	}{
		{pgx.QueryExecModeCacheStatement, []failure{
			chanArg,
			{"an int for a text parameter", "select upper($1) /* int */", []any{42}, false},
			{"more arguments than parameters", "select $1::int /* count */", []any{1, 2}, true},
		}},
		{pgx.QueryExecModeExec, []failure{chanArg}},
	}
	for _, m := range modes {
		t.Run(m.mode.String(), func(t *testing.T) {
			ctx := pgtest.Ctx(t)
			cfg, err := pgx.ParseConfig(pgtest.ConnString(t))
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = m.mode
			plain, err := pgx.ConnectConfig(ctx, cfg) // pgx alone
			if err != nil {
				t.Fatal(err)
			}
			defer plain.Close(ctx)
			mode := func(c *Config) { c.ConnConfig.DefaultQueryExecMode = m.mode }
			pools := []struct {
				name string
				p    *Pool
			}{
				// One connection: never pipelined, whatever
				// SHOAL_TEST_PIPELINE says.
				{"off", newTestPool(t, func(c *Config) { mode(c); c.MaxConns = 1 })},
				{"on", newPipelinedPool(t, 2, 8, mode)},
			}
			oneSharedConn(t, pools[1].p)
			for _, f := range m.failures {
				b := &pgx.Batch{}
				b.Queue(f.sql, f.args...)
				want := batchErrors(plain.SendBatch(ctx, b))
				if want.exec == "" || want.close == "" {
					t.Fatalf("%s: pgx ran the batch (%+v): the test proves nothing", f.name, want)
				}
				for _, pl := range pools {
					for i := range 4 {
						b := &pgx.Batch{}
						b.Queue(f.sql, f.args...)
						got := batchErrors(pl.p.SendBatch(ctx, b))
						if i == 0 && pl.name == "on" && !f.all {
							t.Logf("%s, pipelining on, first run: %+v", f.name, got) // either is fine
							continue
						}
						if got != want {
							t.Errorf("%s, pipelining %s, run %d:\n got %+v\nwant %+v (pgx's)", f.name, pl.name, i+1, got, want)
						}
					}
				}
			}
		})
	}
}

// batchOutcome is how a batch of one statement failed: the text of the
// errors its Exec and Close returned ("" for none).
type batchOutcome struct {
	exec, close string
}

// batchErrors reads a batch of one statement and returns how it failed.
func batchErrors(br pgx.BatchResults) batchOutcome {
	var out batchOutcome
	if _, err := br.Exec(); err != nil {
		out.exec = err.Error()
	}
	if err := br.Close(); err != nil {
		out.close = err.Error()
	}
	return out
}
