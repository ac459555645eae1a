package observewrap

import "github.com/shoalpool/shoal"

// Events returns an Observer that passes the events to o, and the waits
// when o traces them, but attaches nothing: for a second pool whose events
// o counts as the first's, while its gauges and holders read the first
// pool (Options.Stats can add the second's figures in). Events(nil) is nil.
func Events(o shoal.Observer) shoal.Observer {
	if o == nil {
		return nil
	}
	if t, ok := tracerOf(o); ok {
		return eventsTracer{events{o}, traceTo{t}}
	}
	return events{o}
}

// events is what Events returns for an Observer that does not trace waits:
// the embedded interface has the event methods only.
type events struct{ shoal.Observer }

// eventsTracer is what Events returns for an Observer that traces waits.
type eventsTracer struct {
	events
	traceTo
}
