package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// TestChartTitleOfASweep: a sweep's chart says its windows are per
// configuration, as its flags do, not per case.
func TestChartTitleOfASweep(t *testing.T) {
	rep := &benchrun.Report{Command: "sweep", Warmup: defaultWarmup, Duration: defaultDuration, Rounds: defaultSweepRounds,
		Scenarios: []benchrun.ScenarioResult{{Name: "sweep", Groups: []benchrun.GroupResult{{Title: "64 workers", Workers: 64,
			Results: []benchrun.Result{{Name: "2x2", Status: benchrun.StatusOK, Ops: 100, IPS: 1000, Latency: benchrun.Latency{Mean: time.Millisecond, Median: time.Millisecond}}}}}}}}
	var buf bytes.Buffer
	if err := benchrun.WriteChart(&buf, "svg", rep); err != nil {
		t.Fatal(err)
	}
	if svg := buf.String(); !strings.Contains(svg, "warm-up per configuration") || strings.Contains(svg, "per case") {
		t.Errorf("the sweep's chart title does not say per configuration")
	}
}
