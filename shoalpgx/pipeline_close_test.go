package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// Close waits for callers, not for statements whose callers gave up: a
// pipelined pg_sleep(3600) abandoned after it started would otherwise hold
// Close for an hour. The server's backend is told to stop it too. The
// caller gives up before Close, or while Close waits for it.
func TestPipelineCloseDoesNotWaitForAbandonedStatements(t *testing.T) {
	for _, whileClosing := range []bool{false, true} {
		name := map[bool]string{false: "given up before Close", true: "given up while Close waits"}[whileClosing]
		t.Run(name, func(t *testing.T) {
			// Its own name, so that no other run's statement is counted.
			app := fmt.Sprintf("shoalpgx-close-abandoned-%d-%d", os.Getpid(), time.Now().UnixNano())
			p := newPipelinedPool(t, 4, 8, func(c *Config) { c.ConnConfig.RuntimeParams["application_name"] = app })
			admin := pgtest.AdminConn(t)
			ctx := pgtest.Ctx(t)
			sleeping := func() int {
				var n int
				if err := admin.QueryRow(ctx, "select count(*) from pg_stat_activity where application_name = $1 and query like 'select pg_sleep%'", app).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}

			qctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := p.Exec(qctx, "select pg_sleep($1::float8)", 3600)
				done <- err
			}()
			pgtest.WaitFor(t, 10*time.Second, "the statement running at the server", func() bool { return sleeping() == 1 })
			if n := p.Stat().Pipelined().Leases; n != 1 {
				t.Fatalf("%d statements in flight on shared connections, want the one, pipelined", n)
			}
			closed := make(chan struct{})
			if whileClosing {
				go func() { p.Close(); close(closed) }()
				pgtest.WaitFor(t, 10*time.Second, "Close under way", p.pipe.closing.Load)
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("the abandoned statement: %v, want context.Canceled", err)
			}
			if !whileClosing {
				go func() { p.Close(); close(closed) }()
			}
			select {
			case <-closed:
			case <-time.After(30 * time.Second): // against an hour's sleep
				t.Fatal("Close waits for a statement whose caller gave up")
			}
			pgtest.WaitFor(t, 10*time.Second, "the server to stop the abandoned statement", func() bool { return sleeping() == 0 })
		})
	}
}
