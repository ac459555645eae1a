package shoalpgx

import (
	"context"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgpair"
)

// TestReadsReset guards ReadPool.Reset: it ends the read pool's sessions,
// where the Pool's own Reset leaves them alone.
func TestReadsReset(t *testing.T) {
	pair := pgpair.ForTest(t)
	pool, reads := readsPool(t, pair, time.Second)
	ctx := context.Background()
	var pid int32
	if err := reads.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	// Asked through the read pool, on the server that runs the session.
	alive := func() bool {
		t.Helper()
		var n int
		if err := reads.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	pool.Reset()
	if !alive() {
		t.Fatalf("after Pool.Reset the read pool's session %d has ended, want it kept", pid)
	}
	reads.Reset()
	eventually(t, 5*time.Second, "the read pool's session ends after ReadPool.Reset", func() bool { return !alive() })
}
