package main

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// TestCSVSaysHowManyRoundsARowSums: a row merged from rounds sums ops,
// errors and elapsed_ns over the rounds while window_ns is one round's
// window (what its slices and latencies, the median round's, were measured
// in); the CSV names the rounds, as the JSON's round_ips does, so that
// ops / (rounds x window_ns) is the row's ips.
func TestCSVSaysHowManyRoundsARowSums(t *testing.T) {
	round := func(ips float64) benchrun.Result {
		return benchrun.Result{Name: "pooled", Status: benchrun.StatusOK, Workers: 8, Ops: int64(ips),
			Elapsed: time.Second, IPS: ips, Window: time.Second, Latency: benchrun.Latency{Mean: time.Millisecond}}
	}
	merged := mergeRounds([]benchrun.Result{round(1000), round(1200), round(1100)})
	rep := &benchrun.Report{Command: "bench", Rounds: 3, Scenarios: []benchrun.ScenarioResult{{Name: "churn",
		Groups: []benchrun.GroupResult{{Title: "8 workers", Workers: 8, Results: []benchrun.Result{merged}}}}}}
	var buf bytes.Buffer
	if err := benchrun.WriteCSV(&buf, rep); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) string {
		i := slices.Index(rows[0], name)
		if i < 0 {
			t.Fatalf("no %s column in %q", name, rows[0])
		}
		return rows[1][i]
	}
	for name, want := range map[string]string{"ops": "3300", "elapsed_ns": "3000000000", "window_ns": "1000000000", "rounds": "3", "ips": "1100.00"} {
		if got := col(name); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
}
