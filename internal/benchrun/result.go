package benchrun

import "time"

// Status says how a case ended.
type Status string

// The statuses of a Result.
const (
	StatusOK          Status = "ok"          // measured without errors
	StatusFailed      Status = "failed"      // setup failed or an operation returned an error
	StatusSkipped     Status = "skipped"     // not run: see Reason
	StatusInterrupted Status = "interrupted" // stopped by Ctrl-C before its measurement ended
)

// Result is one case's measurement. Durations are in nanoseconds in JSON.
type Result struct {
	Name    string      `json:"name"`             // Case.Name
	Status  Status      `json:"status"`           // how the case ended
	Reason  string      `json:"reason,omitempty"` // why it was skipped or failed
	Workers int         `json:"workers"`          // Group.Workers
	Pool    *PoolConfig `json:"pool,omitempty"`   // Case.Pool

	// Ops, Errors, Elapsed and the connections opened are counted in the
	// measured period; in a row of rounds (RoundIPS), summed over them.
	Ops    int64 `json:"ops"`    // operations started in the measured period that completed
	Errors int64 `json:"errors"` // operations that failed
	// Elapsed runs from the measured period's start to the end of the
	// last operation started in it.
	Elapsed time.Duration `json:"elapsed_ns"`
	// IPS is operations per second (ops/s) over all workers together:
	// the operations done in the measured window (those under way at its
	// start or end counted for the share of their time inside it) over
	// its length, the mean of SliceIPS. The name is Benchee's "iterations
	// per second", kept in JSON and CSV for the scripts that read them.
	IPS float64 `json:"ips"`
	// Window is the measured period as planned (Settings.Duration), which
	// SliceIPS divides: in a row of rounds, one round's, as the slices and
	// the latencies are the median round's.
	Window time.Duration `json:"window_ns,omitempty"`
	// SliceIPS is the throughput in each of ten equal slices of Window,
	// each operation counted in the slices it ran in, in proportion to the
	// time it spent there: how much the throughput varied while the case
	// ran, which Compare judges differences by.
	SliceIPS    []float64 `json:"slice_ips,omitempty"`
	Latency     Latency   `json:"latency"`                // of the operations of the measured period
	AcquireWait *Wait     `json:"acquire_wait,omitempty"` // pooled cases only
	// ConnsOpened counts the connections opened during the measured
	// period, when the case can tell: 0 for a pool that opened its
	// connections before it and kept them.
	ConnsOpened *int64 `json:"conns_opened,omitempty"`
	// ConnsOpenedTotal counts the connections opened from the case's
	// start: its setup, its warm-up and the measured period.
	ConnsOpenedTotal *int64 `json:"conns_opened_total,omitempty"`
	// RoundIPS, in a sweep or a bench in rounds, is IPS in each round, in
	// round order; IPS is then their mean, and the latency and wait
	// columns are those of the median round.
	RoundIPS []float64 `json:"round_ips,omitempty"`
	// Rounds is how many runs the row's figures come from, as the CSV's
	// rounds column says: in a row of rounds, the length of RoundIPS, over
	// which Ops, Errors, Elapsed and the connections are summed; 1 for one
	// run, a failed case's too (its figures are its first failure's); 0,
	// left out of JSON, for a case that did not run.
	Rounds int `json:"rounds,omitempty"`
}

// Measured reports whether r holds numbers worth printing.
func (r *Result) Measured() bool {
	return (r.Status == StatusOK || r.Status == StatusFailed) && r.Ops > 0
}

// GroupResult holds the results of one Group.
type GroupResult struct {
	Title   string   `json:"title"`   // Group.Title
	Workers int      `json:"workers"` // Group.Workers
	Results []Result `json:"results"` // one for each of its cases, in order
}

// ScenarioResult holds one scenario's groups.
type ScenarioResult struct {
	Name        string        `json:"name"`              // the scenario, as bench's --only names it
	Description string        `json:"description"`       // what it measures, in a line
	Server      string        `json:"server"`            // what it ran against
	Skipped     string        `json:"skipped,omitempty"` // why the whole scenario did not run
	Groups      []GroupResult `json:"groups"`            // its tables, in order
}

// Machine describes where a report was made.
type Machine struct {
	OS        string `json:"os"`         // runtime.GOOS
	Arch      string `json:"arch"`       // runtime.GOARCH
	CPU       string `json:"cpu"`        // the CPU's model name, or "unknown"
	Cores     int    `json:"cores"`      // runtime.NumCPU
	Memory    string `json:"memory"`     // the machine's memory, or "unknown"
	GoVersion string `json:"go_version"` // the Go that built the command, as "Go " and its version
}

// Report is everything one invocation measured.
type Report struct {
	Command string  `json:"command"` // the subcommand that made it: "bench" or "sweep"
	Target  string  `json:"target"`  // "embedded" or the target with its password redacted
	Machine Machine `json:"machine"` // where it ran
	// Date is when the run started; Quick, whether it was --quick. The
	// chart's title says both, so that a chart found later tells how it
	// was made.
	Date     time.Time     `json:"date"`
	Quick    bool          `json:"quick"`       // --quick was given
	Warmup   time.Duration `json:"warmup_ns"`   // each case's warm-up, not measured
	Duration time.Duration `json:"duration_ns"` // each case's measured period
	// Rounds, in a sweep, is how many times each configuration ran.
	Rounds      int              `json:"rounds,omitempty"`
	Scenarios   []ScenarioResult `json:"scenarios"`   // in the order they ran
	Interrupted bool             `json:"interrupted"` // Ctrl-C stopped the run before its end
	// Recommendation is the sweep's answer; bench has none.
	Recommendation *Recommendation `json:"recommendation,omitempty"`
}

// Recommendation is a sweep's answer: the smallest configuration that is
// significantly faster than the default and not significantly slower than
// the fastest such, or, when none is significantly faster, the default
// (KeepDefault).
type Recommendation struct {
	Name        string      `json:"name"`         // the configuration recommended
	Pool        *PoolConfig `json:"pool"`         // its settings
	IPS         float64     `json:"ips"`          // mean over the rounds
	KeepDefault bool        `json:"keep_default"` // no configuration beat the default
	Default     string      `json:"default"`      // the default configuration's name
	DefaultIPS  float64     `json:"default_ips"`  // its mean over the rounds
	// Ratio is the recommended configuration's throughput over the
	// default's (the geometric mean of the rounds' ratios), between
	// RatioLow and RatioHigh with Confidence; 1 when KeepDefault.
	Ratio      float64 `json:"ratio"`
	RatioLow   float64 `json:"ratio_low"`             // the low bound of Ratio
	RatioHigh  float64 `json:"ratio_high"`            // the high bound of Ratio
	Confidence float64 `json:"confidence"`            // of each comparison, after Bonferroni
	Best       string  `json:"best,omitempty"`        // the fastest configuration, when one beat the default
	BestIPS    float64 `json:"best_ips,omitempty"`    // its mean over the rounds
	Rounds     int     `json:"rounds"`                // how many times each configuration ran
	ConnString string  `json:"conn_string,omitempty"` // password redacted
	GoConfig   string  `json:"go_config,omitempty"`   // the same settings as Go code to paste
}

// Measured reports whether any case of the report has numbers.
func (r *Report) Measured() bool {
	for _, s := range r.Scenarios {
		for _, g := range s.Groups {
			for i := range g.Results {
				if g.Results[i].Measured() {
					return true
				}
			}
		}
	}
	return false
}

// Failed reports whether any case failed.
func (r *Report) Failed() bool {
	for _, s := range r.Scenarios {
		for _, g := range s.Groups {
			for _, res := range g.Results {
				if res.Status == StatusFailed {
					return true
				}
			}
		}
	}
	return false
}
