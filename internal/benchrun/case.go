package benchrun

import (
	"context"
	"time"
)

// Op is one operation of a benchmark: one request, one query. It returns how
// long it waited to acquire a connection when the case is pooled (Case.Pooled),
// and the operation's error.
type Op func(ctx context.Context) (acquireWait time.Duration, err error)

// Instance is a case made ready to run: the operation and what to do after.
type Instance struct {
	// Op is what each worker calls, over and over, while the case runs.
	Op Op
	// ConnsOpened, when set, reports the connections opened since Setup
	// began; the runner reports that total and how many of them were
	// opened during the measured period.
	ConnsOpened func() int64
	// Close releases what Setup made. It is called once, after the run.
	Close func() error
	// Waits, when set, is the pool's own Observer: the acquire-wait
	// percentiles of the measured period come from it rather than from
	// the waits the operation timed around Acquire.
	Waits *WaitObserver
}

// Case is one line of a benchmark table.
type Case struct {
	// Name is the case's row in the table and its key in JSON and CSV.
	Name string
	// Pooled cases report acquire waits from their Op.
	Pooled bool
	// Pool describes the pool's configuration, for the output; optional.
	Pool *PoolConfig
	// Skip, when not empty, says why the case is not run (an adapter that
	// has not landed, a target that does not fit). It is reported, never
	// measured.
	Skip string
	// Setup prepares the case: dials, warms its pool. ctx bounds it.
	Setup func(ctx context.Context) (*Instance, error)
}

// PoolConfig is the part of a pool's configuration a reader needs to tell
// the cases of a sweep apart.
type PoolConfig struct {
	MaxConns          int `json:"max_conns"`                     // connections in all
	Partitions        int `json:"partitions,omitempty"`          // the pool's partitions; 0 when not set
	ConnsPerPartition int `json:"conns_per_partition,omitempty"` // MaxConns over Partitions
	MaxStreams        int `json:"max_streams,omitempty"`         // leases per connection, multiplexed only
}

// Group is a set of cases run with the same number of workers and compared
// with each other in one table.
type Group struct {
	Title   string // the table's heading
	Workers int    // goroutines calling each case's Op at once
	Cases   []Case // the table's rows, in order
}
