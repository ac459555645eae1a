//go:build !race

package shoalpgx

// raceEnabled says the race detector is on (race_on_test.go).
const raceEnabled = false
