package shoal

import (
	"testing"
	"testing/synctest"
)

// Stats reports the floors the pool keeps now: held to a limit that
// InitialMaxConns or SetMaxConns set below them, and back in full once the
// limit rises, as maintenance keeps them.
func TestStatsFloorsKeepToTheLimit(t *testing.T) {
	cases := []struct {
		name  string
		cfg   Config[*fakeConn]
		floor func(Stats) int
	}{
		{"MinIdle", Config[*fakeConn]{MinIdle: 3}, func(s Stats) int { return s.MinIdle }},
		{"MinConns", Config[*fakeConn]{MinConns: 3}, func(s Stats) int { return s.MinConns }},
		{"MinConns multiplexed", Config[*fakeConn]{MinConns: 3, MaxStreams: 10}, func(s Stats) int { return s.MinConns }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := tc.cfg
				cfg.MaxConns, cfg.InitialMaxConns = 4, 1
				p, _ := newTestPool(t, cfg)
				for _, step := range []struct{ limit, floor int }{{1, 1}, {4, 3}, {2, 2}} {
					if err := p.SetMaxConns(step.limit); err != nil {
						t.Fatal(err)
					}
					synctest.Wait()
					if s := p.Stats(); tc.floor(s) != step.floor || s.TotalConns != step.floor {
						t.Errorf("floor 3 at limit %d: Stats report %s %d with %d open, want %d",
							step.limit, tc.name, tc.floor(s), s.TotalConns, step.floor)
					}
				}
			})
		})
	}
}
