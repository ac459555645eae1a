package shoaletcd

import "time"

// smoother turns the pool's sampled demand into the demand a member
// publishes: the highest sample of the last IdleTime. A rise shows at
// once; a fall shows only once demand has stayed low for IdleTime, so
// shares do not follow every dip between two bursts.
type smoother struct {
	window  time.Duration
	samples []sample // oldest first; values strictly decreasing
}

type sample struct {
	at    time.Time
	value int
}

// add records v at now and returns the smoothed demand. The kept samples
// form a decreasing run (a newer, higher sample makes older ones moot), so
// the maximum is the first, and the slice stays short.
func (s *smoother) add(now time.Time, v int) int {
	for len(s.samples) > 0 && s.samples[len(s.samples)-1].value <= v {
		s.samples = s.samples[:len(s.samples)-1]
	}
	s.samples = append(s.samples, sample{at: now, value: v})
	drop := 0
	for drop < len(s.samples)-1 && now.Sub(s.samples[drop].at) >= s.window {
		drop++
	}
	s.samples = append(s.samples[:0], s.samples[drop:]...)
	return s.samples[0].value
}
