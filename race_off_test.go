//go:build !race

package shoal

const raceEnabled = false
