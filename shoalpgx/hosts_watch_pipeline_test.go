package shoalpgx

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgpair"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A pipelined read-write pool whose statements all went on shared
// connections (Exec, Query, QueryRow, SendBatch outside a transaction)
// has no idle whole connection to look at; the look every
// RoleCheckPeriod still sees its primary fenced, and resets the pool
// before a write is refused, as it does without pipelining.
func TestPipelineRoleCheckSeesAFence(t *testing.T) {
	for _, pipeline := range []int{0, 8} {
		t.Run(fmt.Sprintf("pipeline=%d", pipeline), func(t *testing.T) { roleCheckSeesAFence(t, pipeline) })
	}
}

// roleCheckSeesAFence is TestPipelineRoleCheckSeesAFence with pipeline as
// the pool's Pipeline.
func roleCheckSeesAFence(t *testing.T, pipeline int) {
	pair := pgpair.ForTest(t)
	ctx := pgtest.Ctx(t)
	cfg, err := ParseConfig(pair.HA)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns, cfg.Pipeline, cfg.RoleCheckPeriod = 4, pipeline, 50*time.Millisecond
	pool := newPoolFor(t, cfg)
	for range 3 {
		if _, err := pool.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := pool.resets.Load(); n != 0 {
		t.Fatalf("%d resets before the fence, want 0", n)
	}
	t.Cleanup(func() {
		if err := pair.SetReadOnly(context.Background(), pair.Primary, false); err != nil {
			t.Errorf("lifting the fence: %v", err)
		}
	})
	if err := pair.SetReadOnly(ctx, pair.Primary, true); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, 5*time.Second, "a reset after the fence, before any write", func() bool { return pool.resets.Load() > 0 })
}
