package main

import (
	"runtime"
	"strings"
	"testing"
)

// TestSuggestedSettingsOpenTheRecommendedPool: the connection string the
// sweep suggests, pasted back (with the password, which does not matter
// here), opens the configuration it recommends: its connections and its
// partitions, one partition included, on a machine where no setting means
// several. A setting already in the target, in either form, is replaced,
// not left beside the new one.
func TestSuggestedSettingsOpenTheRecommendedPool(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // no pool_partitions: 4 partitions
	for _, raw := range []string{
		"postgres://u:pw@127.0.0.1:5432/db?sslmode=disable",
		"postgres://u:pw@127.0.0.1:5432/db?pool_max_conns=50&pool_partitions=4",
		"host=127.0.0.1 user=u password=pw dbname=db",
		"host=127.0.0.1 user=u password=pw dbname=db pool_max_conns=50 pool_partitions=4",
	} {
		for _, want := range [][2]int{{8, 1}, {8, 2}, {16, 8}} {
			got, _ := pgPoolSettings(raw, want[0], want[1])
			conns, parts, err := pgDefaultPool(strings.ReplaceAll(got, redactedWord, "pw"))
			if err != nil {
				t.Errorf("%s for %dx%d: %v", got, want[1], want[0]/want[1], err)
				continue
			}
			if conns != want[0] || parts != want[1] {
				t.Errorf("%s opens %d connections in %d partitions, want %d in %d", got, conns, parts, want[0], want[1])
			}
			if strings.Count(got, "pool_max_conns=") != 1 || strings.Count(got, "pool_partitions=") > 1 {
				t.Errorf("%s sets a pool key twice", got)
			}
		}
	}
}
