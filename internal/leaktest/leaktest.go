// Package leaktest gives the tests of shoal's packages an Observer that
// keeps the leak reports a pool makes (Config.LeakThreshold).
package leaktest

import (
	"sync"

	"github.com/shoalpool/shoal"
)

// Recorder is a shoal.Observer that keeps every leak report it is told of;
// it ignores every other event. Its zero value is ready to use.
type Recorder struct {
	shoal.BaseObserver
	mu      sync.Mutex
	reports []shoal.LeakReport
}

// ObserveLeak keeps r.
func (o *Recorder) ObserveLeak(r shoal.LeakReport) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.reports = append(o.reports, r)
}

// Reports returns a copy of the reports kept so far, oldest first.
func (o *Recorder) Reports() []shoal.LeakReport {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]shoal.LeakReport(nil), o.reports...)
}
