package shoalpgx

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// fenceScene is the opening the fence's tests share: another session, a
// paused process's, holds one slot's lock under the test's fence key, and
// the pool's connects are counted, so that a test tells a slot the look
// before the dial refused (no connect) from one the lock refused after
// connecting.
type fenceScene struct {
	key      int32
	stale    *pgx.Conn    // the session holding the slot's lock
	connects atomic.Int32 // the pool's connects, counted by BeforeConnect
}

// newFenceScene takes the lock of slot under key in a session of its own.
func newFenceScene(t *testing.T, key int32, slot int32) *fenceScene {
	t.Helper()
	s := &fenceScene{key: key, stale: pgtest.AdminConn(t)}
	if _, err := s.stale.Exec(pgtest.Ctx(t), "SELECT pg_advisory_lock($1, $2)", key, slot); err != nil {
		t.Fatal(err)
	}
	return s
}

// pool is the config of a pool on budget b that counts its connects in
// s, with mutate's changes after.
func (s *fenceScene) pool(b shoal.Budget, mutate func(*Config)) func(*Config) {
	return func(c *Config) {
		c.Budget = b
		c.BeforeConnect = func(context.Context, *pgx.ConnConfig) error { s.connects.Add(1); return nil }
		if mutate != nil {
			mutate(c)
		}
	}
}
