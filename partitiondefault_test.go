package shoal

import (
	"context"
	"testing"
)

// Partitions 0 means GOMAXPROCS, at most MaxConns, at most 16: the cap
// holds on a machine with more cores than that, whichever this one is.
func TestPartitionsDefault(t *testing.T) {
	dial := func(context.Context) (int, error) { return 0, nil }
	for _, c := range []struct{ procs, maxConns, want int }{
		{2, 100, 2},
		{8, 4, 4},
		{64, 100, 16},
		{64, 8, 8},
	} {
		cfg := Config[int]{Dial: dial, MaxConns: c.maxConns}
		if got := deriveFeatures(&cfg, c.procs).partitions; got != c.want {
			t.Errorf("GOMAXPROCS %d, MaxConns %d: %d partitions, want %d", c.procs, c.maxConns, got, c.want)
		}
	}
}
