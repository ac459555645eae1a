package main

import (
	"fmt"
	"strconv"
	"testing"
)

// TestPipelinedWaitsAreThePools: the pipelined case's wait columns are
// the waits its pool reports, not a zero for every statement. With more
// workers than its shared connections carry statements, some wait for
// room, so the longest wait is above zero.
func TestPipelinedWaitsAreThePools(t *testing.T) {
	workers := 2 * pgPipelineConns * pgPipelineDepth
	rep, _ := benchTarget(t, postgresDSN(t), "--only", "multiplex", "--workers", strconv.Itoa(workers))
	name := fmt.Sprintf("pipelined_%d_conns", pgPipelineConns)
	found := false
	for _, s := range rep.Scenarios {
		for _, g := range s.Groups {
			for _, res := range g.Results {
				if res.Name != name {
					continue
				}
				found = true
				if w := res.AcquireWait; w == nil || w.Max <= 0 {
					t.Errorf("%s with %d workers: acquire wait %+v, want the pool's waits (some above zero)", res.Name, workers, w)
				}
			}
		}
	}
	if !found {
		t.Fatalf("no %s case in the report", name)
	}
}
