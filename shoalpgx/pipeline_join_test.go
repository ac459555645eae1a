package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A caller that acquired a shared connection just before the pool began
// to cancel the statements given up on it, and sends while the cancel
// requests are out, is not failed for them: its statement waits in the
// queue until the server has answered the abandoned ones, so that no
// cancel request can stop it, and then runs, on that connection, or on
// another one when the server never answers and the connection is
// broken. Before, it was written at once and the connection broken under
// it ("pipelined connection closed"), since a cancel request could have
// stopped it instead.
//
// The abandoned statement swallows cancel requests, telling the client
// of each (a notice), for stop seconds; the joining caller's encoder runs
// after its acquire and admit, and waits for the first notice, so that
// it sends once a cancel request has reached the server.
func TestPipelineCallerJoiningDuringCancelRuns(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop float64 // how long the statement swallows cancel requests, seconds
	}{
		{"the server answers within CancelTimeout", 1.5},
		{"the server never answers in time", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caught := make(chan struct{}, 1)
			const notice = "shoal test: a cancel request caught"
			p, _ := closeTestPool(t, 3, func(c *Config) {
				c.CancelTimeout = time.Second
				c.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
					if n.Message == notice {
						select {
						case caught <- struct{}{}:
						default:
						}
					}
				}
			})
			conn := oneSharedConn(t, p)
			admin := pgtest.AdminConn(t)
			ctx := pgtest.Ctx(t)
			fn := fmt.Sprintf("shoal_catch_cancel_%d", time.Now().UnixNano())
			if _, err := admin.Exec(ctx, "create function "+fn+"(secs float8) returns int language plpgsql as $$"+
				"DECLARE stop timestamptz := clock_timestamp() + make_interval(secs => secs);"+
				"BEGIN LOOP BEGIN WHILE clock_timestamp() < stop LOOP PERFORM pg_sleep(0.02); END LOOP; EXIT;"+
				"EXCEPTION WHEN query_canceled THEN RAISE NOTICE '"+notice+"'; END; END LOOP; RETURN 1; END $$"); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "drop function if exists "+fn) })

			short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			if _, err := p.Exec(short, fmt.Sprintf("select %s(%g)", fn, tc.stop)); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("the statement given up on: %v", err)
			}

			// The joining caller: acquired and admitted at once, on
			// the connection the abandoned statement holds (the only
			// shared one), sending once a cancel request has come.
			var on *pipeConn
			r := newPipeReq(1)
			err := p.pipe.run(ctx, r, modeUnnamed, func(b *pipeBuild, buf []byte) ([]byte, error) {
				if on == nil {
					on = b.c
					select {
					case <-caught:
					case <-time.After(10 * time.Second):
						return nil, errors.New("no cancel request reached the abandoned statement within 10s")
					}
				}
				return (&pgproto3.Query{String: "select 42"}).Encode(buf)
			})
			if on != conn {
				t.Fatalf("the joining caller was given another connection than the abandoned statement's")
			}
			if err != nil {
				t.Fatalf("the joining caller: %v", err)
			}
			res := r.result(0)
			if res.err != nil || len(res.rows) != 1 || string(res.rows[0][0]) != "42" {
				t.Fatalf("the joining caller's answer: %q, %v; want 42", res.rows, res.err)
			}
			if tc.stop < 2 && len(p.pipe.conns()) != 1 {
				t.Errorf("%d shared connections open, want the one whose server answered the cancel", len(p.pipe.conns()))
			}
		})
	}
}
