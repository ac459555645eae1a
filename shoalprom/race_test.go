//go:build race

package shoalprom_test

// raceEnabled reports whether the race detector is on; it changes what
// allocates, so the allocation tests skip under it.
const raceEnabled = true
