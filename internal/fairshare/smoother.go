package fairshare

import "time"

// Smoother turns a member's sampled demand into the demand its share is
// computed from: the highest sample of the last Window. A rise shows at
// once; a fall shows only once demand has stayed low for Window, so a
// share grows at once and shrinks only after Window: the hysteresis that
// keeps shares from following every short dip between two bursts. The
// zero Window follows every sample. A Smoother is not safe for concurrent
// use.
type Smoother struct {
	Window  time.Duration // how long a high sample counts
	samples []sample      // oldest first; values strictly decreasing
}

type sample struct {
	at    time.Time
	value int
}

// Add records v at now and returns the smoothed demand. The kept samples
// form a decreasing run (a newer, higher sample makes older ones moot), so
// the maximum is the first, and the slice stays short.
func (s *Smoother) Add(now time.Time, v int) int {
	for len(s.samples) > 0 && s.samples[len(s.samples)-1].value <= v {
		s.samples = s.samples[:len(s.samples)-1]
	}
	s.samples = append(s.samples, sample{at: now, value: v})
	drop := 0
	for drop < len(s.samples)-1 && now.Sub(s.samples[drop].at) >= s.Window {
		drop++
	}
	s.samples = append(s.samples[:0], s.samples[drop:]...)
	return s.samples[0].value
}

// Expires reports when the smoothed demand may next fall with no new
// sample above it: when the highest kept sample leaves the window. It
// returns false when it cannot fall (one sample kept, or none).
func (s *Smoother) Expires() (time.Time, bool) {
	if len(s.samples) < 2 {
		return time.Time{}, false
	}
	return s.samples[0].at.Add(s.Window), true
}
