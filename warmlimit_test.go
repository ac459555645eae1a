package shoal

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// Warm opens the floors only up to the limit: after SetMaxConns took it
// below MinIdle or MinConns, Warm returns once the limit is open rather
// than wait for connections the pool may not open.
func TestWarmStopsAtALimitBelowTheFloors(t *testing.T) {
	for _, floors := range []Config[*fakeConn]{{MinConns: 3}, {MinIdle: 3}} {
		synctest.Test(t, func(t *testing.T) {
			floors.MaxConns = 4
			p, _ := newTestPool(t, floors)
			if err := p.SetMaxConns(2); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := p.Warm(ctx); err != nil {
				t.Fatalf("MinConns %d, MinIdle %d, SetMaxConns(2): Warm: %v, want it done at the limit",
					floors.MinConns, floors.MinIdle, err)
			}
			if s := p.Stats(); s.TotalConns != 2 {
				t.Errorf("after Warm: %d open, want the limit, 2", s.TotalConns)
			}
		})
	}
}
