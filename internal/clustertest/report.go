package clustertest

// Report is one line of a worker's stdout, written every -report (100ms by
// default): its pool's and its budget's state, and counters since it
// started.
type Report struct {
	At  int64 `json:"at"` // Unix milliseconds
	PID int   `json:"pid"`

	// From the pool's Stats.
	Share   int `json:"share"`
	Demand  int `json:"demand"`
	Open    int `json:"open"` // connections open, not counting dials
	Dialing int `json:"dialing"`
	InUse   int `json:"in_use"`
	Waiting int `json:"waiting"`
	Members int `json:"members"`

	// From the budget's Status.
	Fair   int  `json:"fair"`
	Held   int  `json:"held"`
	Joined bool `json:"joined"`
	Online bool `json:"online"`

	// From the load and the observer; counters since the start.
	Load       int              `json:"load"`
	Queries    int64            `json:"queries"`
	Errors     int64            `json:"errors"`
	FirstError string           `json:"first_error,omitempty"`
	Dials      int64            `json:"dials"`
	DialErrors int64            `json:"dial_errors"`
	Fenced     int64            `json:"fenced"`           // dials refused by shoalpgx's fence
	Connects   int64            `json:"connects"`         // connections made at the server (BeforeConnect calls)
	Closed     map[string]int64 `json:"closed,omitempty"` // by shoal.Reason
	// Dropped counts the connections closed for a reason other than the
	// budget's (resized) or their age (lifetime, idle): closes a caller
	// could have felt.
	Dropped int64 `json:"dropped"`
}
