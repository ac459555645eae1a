package main

import "io"

// outputWriter passes the results on to stdout and keeps the first error a
// write returned. The tables go out in many small writes, none of which
// is checked where it is made: finish checks this once, so that a run
// whose results could not be written (a full disk, say) fails rather than
// ends with status 0 and its results lost.
type outputWriter struct {
	w   io.Writer
	err error
}

// Write writes p, and nothing more once a write has failed.
func (o *outputWriter) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = err
	}
	return n, err
}
