package clustertest

// Report is one line of a worker's stdout, written every -report (100ms by
// default): its pool's and its budget's state, and counters since it
// started.
type Report struct {
	At  int64 `json:"at"`  // Unix milliseconds
	PID int   `json:"pid"` // the worker's process

	// From the pool's Stats.
	Share   int `json:"share"`   // connections the budget lets the pool hold now
	Demand  int `json:"demand"`  // connections in use plus waited for
	Open    int `json:"open"`    // connections open, not counting dials
	Dialing int `json:"dialing"` // dials in flight
	InUse   int `json:"in_use"`  // connections with a lease
	Waiting int `json:"waiting"` // callers waiting in Acquire
	Members int `json:"members"` // pools sharing the budget, every worker's

	// From the budget's Status.
	Fair   int  `json:"fair"`   // this worker's max-min share of the budget
	Held   int  `json:"held"`   // slots it holds, plus permits not yet backed by one
	Joined bool `json:"joined"` // it joined etcd at least once
	Online bool `json:"online"` // etcd answers now

	// From the load and the observer; counters since the start.
	Load       int              `json:"load"`                  // goroutines running queries now
	Queries    int64            `json:"queries"`               // queries that succeeded
	Errors     int64            `json:"errors"`                // queries that failed
	FirstError string           `json:"first_error,omitempty"` // the first failed query's error
	Dials      int64            `json:"dials"`                 // the pool's dials attempted
	DialErrors int64            `json:"dial_errors"`           // of them, those that failed
	Fenced     int64            `json:"fenced"`                // dials refused by shoalpgx's fence
	Connects   int64            `json:"connects"`              // connections made at the server (BeforeConnect calls)
	Closed     map[string]int64 `json:"closed,omitempty"`      // by shoal.Reason
	// Dropped counts the connections closed for a reason other than the
	// budget's (resized) or their age (lifetime, idle): closes a caller
	// could have felt.
	Dropped int64 `json:"dropped"`
}
