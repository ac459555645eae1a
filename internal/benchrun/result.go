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
	Name    string      `json:"name"`
	Status  Status      `json:"status"`
	Reason  string      `json:"reason,omitempty"` // why it was skipped or failed
	Workers int         `json:"workers"`
	Pool    *PoolConfig `json:"pool,omitempty"`

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
	// SliceIPS divides.
	Window time.Duration `json:"window_ns,omitempty"`
	// SliceIPS is the throughput in each of ten equal slices of Window,
	// each operation counted in the slices it ran in, in proportion to the
	// time it spent there: how much the throughput varied while the case
	// ran, which Compare judges differences by.
	SliceIPS    []float64 `json:"slice_ips,omitempty"`
	Latency     Latency   `json:"latency"`
	AcquireWait *Wait     `json:"acquire_wait,omitempty"` // pooled cases only
	// ConnsOpened counts the connections opened during the measured
	// period, when the case can tell: 0 for a pool that opened its
	// connections before it and kept them.
	ConnsOpened *int64 `json:"conns_opened,omitempty"`
	// ConnsOpenedTotal counts the connections opened from the case's
	// start: its setup, its warm-up and the measured period.
	ConnsOpenedTotal *int64 `json:"conns_opened_total,omitempty"`
	// RoundIPS, in a sweep, is IPS in each round, in round order; IPS is
	// then their mean, and the latency and wait columns are those of the
	// median round.
	RoundIPS []float64 `json:"round_ips,omitempty"`
}

// Measured reports whether r holds numbers worth printing.
func (r *Result) Measured() bool {
	return (r.Status == StatusOK || r.Status == StatusFailed) && r.Ops > 0
}

// GroupResult holds the results of one Group.
type GroupResult struct {
	Title   string   `json:"title"`
	Workers int      `json:"workers"`
	Results []Result `json:"results"`
}

// ScenarioResult holds one scenario's groups.
type ScenarioResult struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Server      string        `json:"server"`            // what it ran against
	Skipped     string        `json:"skipped,omitempty"` // why the whole scenario did not run
	Groups      []GroupResult `json:"groups"`
}

// Machine describes where a report was made.
type Machine struct {
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPU       string `json:"cpu"`
	Cores     int    `json:"cores"`
	Memory    string `json:"memory"`
	GoVersion string `json:"go_version"`
}

// Report is everything one invocation measured.
type Report struct {
	Command string  `json:"command"`
	Target  string  `json:"target"` // "embedded" or the target with its password redacted
	Machine Machine `json:"machine"`
	// Date is when the run started; Quick, whether it was --quick. The
	// chart's title says both, so that a chart found later tells how it
	// was made.
	Date     time.Time     `json:"date"`
	Quick    bool          `json:"quick"`
	Warmup   time.Duration `json:"warmup_ns"`
	Duration time.Duration `json:"duration_ns"`
	// Rounds, in a sweep, is how many times each configuration ran.
	Rounds      int              `json:"rounds,omitempty"`
	Scenarios   []ScenarioResult `json:"scenarios"`
	Interrupted bool             `json:"interrupted"`
	// Recommendation is the sweep's answer; bench has none.
	Recommendation *Recommendation `json:"recommendation,omitempty"`
}

// Recommendation is a sweep's answer: the smallest configuration that is
// significantly faster than the default and not significantly slower than
// the fastest such, or, when none is significantly faster, the default
// (KeepDefault).
type Recommendation struct {
	Name        string      `json:"name"`
	Pool        *PoolConfig `json:"pool"`
	IPS         float64     `json:"ips"` // mean over the rounds
	KeepDefault bool        `json:"keep_default"`
	Default     string      `json:"default"`
	DefaultIPS  float64     `json:"default_ips"`
	// Ratio is the recommended configuration's throughput over the
	// default's (the geometric mean of the rounds' ratios), between
	// RatioLow and RatioHigh with Confidence; 1 when KeepDefault.
	Ratio      float64 `json:"ratio"`
	RatioLow   float64 `json:"ratio_low"`
	RatioHigh  float64 `json:"ratio_high"`
	Confidence float64 `json:"confidence"` // of each comparison, after Bonferroni
	Best       string  `json:"best,omitempty"`
	BestIPS    float64 `json:"best_ips,omitempty"`
	Rounds     int     `json:"rounds"`
	ConnString string  `json:"conn_string,omitempty"` // password redacted
	GoConfig   string  `json:"go_config,omitempty"`
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
