//go:build race

package shoalpgx

// raceEnabled says the race detector is on: it allocates, and a sync.Pool
// drops some of what it is given, so the tests that count allocations skip
// (scripts/test.sh runs them again without it).
const raceEnabled = true
