package pgtest

import (
	"database/sql"
	"testing"

	"github.com/shoalpool/shoal"
)

// DB closes db at cleanup, before p, the pool it draws its connections
// from, is closed (cleanups run last first), and checks then that it left
// no lease out: whatever a test did through database/sql, every connection
// went back to the pool. stats is the pool's statistics.
func DB(t testing.TB, db *sql.DB, stats func() shoal.Stats) *sql.DB {
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("sql.DB.Close: %v", err)
		}
		if s := stats(); s.InUseConns != 0 || s.Leases != 0 {
			t.Errorf("after the DB closed the pool still has %d connections in use (%d leases)", s.InUseConns, s.Leases)
		}
	})
	return db
}
