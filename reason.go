package shoal

import "strconv"

// Reason says why the pool closed a connection. Its String method gives a
// short lower-case word suitable for logs and metric labels.
type Reason int

// The reasons a connection is closed.
const (
	// ReasonDiscarded: the holder called Lease.Discard, or Do's function
	// panicked or returned an error that Config.Broken reported as fatal.
	ReasonDiscarded Reason = iota + 1
	// ReasonLifetime: the connection outlived its MaxLifetime (with jitter).
	ReasonLifetime
	// ReasonIdle: the connection stayed idle longer than MaxIdleTime.
	ReasonIdle
	// ReasonHealth: HealthCheck returned an error.
	ReasonHealth
	// ReasonRejected: a hook (OnConnect, BeforeAcquire, AfterRelease) said no.
	ReasonRejected
	// ReasonPoolClosed: the pool was closed.
	ReasonPoolClosed
	// ReasonRetired: the holder retired the connection (Lease.Retire, for
	// example after an HTTP/2 GOAWAY) and its last lease ended.
	ReasonRetired
	// ReasonLeaked: LeakReclaim took the connection back from a holder that
	// kept it past LeakThreshold.
	ReasonLeaked
	// ReasonReset: Pool.Reset closed the connections open at the time.
	ReasonReset
	// ReasonResized: the pool was above its limit after SetMaxConns or a
	// smaller Budget share, and this connection was one too many.
	ReasonResized
	// ReasonRevoked: the Budget took this connection's permit back.
	ReasonRevoked
)

var reasonNames = [...]string{
	ReasonDiscarded:  "discarded",
	ReasonLifetime:   "lifetime",
	ReasonIdle:       "idle",
	ReasonHealth:     "health",
	ReasonRejected:   "rejected",
	ReasonPoolClosed: "pool_closed",
	ReasonRetired:    "retired",
	ReasonLeaked:     "leaked",
	ReasonReset:      "reset",
	ReasonResized:    "resized",
	ReasonRevoked:    "revoked",
}

// String returns the reason as one word, such as "lifetime".
func (r Reason) String() string {
	if r > 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}
