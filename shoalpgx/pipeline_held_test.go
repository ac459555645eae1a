package shoalpgx

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// holdPipelined runs n pipelined statements that wait at the server on a
// lock admin takes, and returns once n of the test's backends wait on a
// lock. The lock is on one bigint, the test's fenceKeyFor, apart from the
// fence's locks on two int4s. release lets them finish and fails the test
// if one failed; if the test ends first, admin's close lets go of the lock.
func holdPipelined(t *testing.T, p *Pool, admin *pgx.Conn, n int) (release func()) {
	t.Helper()
	ctx := pgtest.Ctx(t)
	key := int64(fenceKeyFor(t))
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock($1::int8)", key); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, n)
	for range n {
		go func() {
			_, err := p.Exec(ctx, fmt.Sprintf("SELECT pg_advisory_xact_lock(%d::int8)", key))
			done <- err
		}()
	}
	pgtest.WaitFor(t, 10*time.Second, fmt.Sprintf("%d pipelined statements waiting on the lock", n), func() bool {
		var waiting int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", pgtest.AppName(t)).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		return waiting == n
	})
	return func() {
		t.Helper()
		if _, err := admin.Exec(ctx, "SELECT pg_advisory_unlock($1::int8)", key); err != nil {
			t.Fatal(err)
		}
		for range n {
			if err := <-done; err != nil {
				t.Fatalf("a pipelined statement held on the lock: %v", err)
			}
		}
	}
}
