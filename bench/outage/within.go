package main

import "time"

// within runs fn and waits up to limit for it to return; false means it
// had not by then (it goes on in the background). A pool stuck closing, or
// a worker stuck in a call, cannot stall the program this way.
func within(limit time.Duration, fn func()) bool {
	done := make(chan struct{})
	go func() {
		fn()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(limit):
		return false
	}
}
