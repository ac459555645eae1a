package shoal

import (
	"testing"
	"testing/synctest"
)

// InitialMaxConns starts the pool at a lower limit: the floors' first
// dials keep to it, in exclusive and multiplexed mode alike, and a
// SetMaxConns that raises it brings the floors back in full.
func TestInitialMaxConnsHoldsTheFloorsFirstDials(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config[*fakeConn]
	}{
		{"MinIdle", Config[*fakeConn]{MinIdle: 3}},
		{"MinConns", Config[*fakeConn]{MinConns: 3}},
		{"MinConns multiplexed", Config[*fakeConn]{MinConns: 3, MaxStreams: 10}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := tc.cfg
				cfg.MaxConns, cfg.InitialMaxConns = 4, 1
				p, d := newTestPool(t, cfg)
				synctest.Wait()
				if n, s := d.dials.Load(), p.Stats(); n != 1 || s.MaxConns != 1 || s.TotalConns != 1 {
					t.Fatalf("MaxConns 4, InitialMaxConns 1: %d dials once New's floor is met, stats %+v; want 1 dial and MaxConns 1", n, s)
				}
				if err := p.SetMaxConns(4); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				if n := d.openConns(); n != 3 {
					t.Fatalf("%d open after SetMaxConns(4), want the floor (3) back", n)
				}
			})
		})
	}
}
