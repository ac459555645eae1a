package shoal

// TimeHandOutsOnly makes p time each hand-out and do nothing else, which no
// Config asks for alone: the "timed" pool of BenchmarkCheckoutHolders,
// which lives in package shoal_test so that the code checking out is not
// the pool's own.
func TimeHandOutsOnly[T any](p *Pool[T]) { p.feat.plain, p.feat.trackHeld = false, true }
