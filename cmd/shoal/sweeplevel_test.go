package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// TestSweepRoundsHeaderSaysConfidence: the header of the sweep's rounds
// table gives both levels as confidence, each comparison's and all of
// them together's (95%), as bench's legend does, rather than following a
// confidence with the error rate (5%) in the same parentheses.
func TestSweepRoundsHeaderSaysConfidence(t *testing.T) {
	table := []sweepConfig{{maxConns: 4, partitions: 1, isDefault: true}, {maxConns: 4, partitions: 2}, {maxConns: 8, partitions: 2}}
	var results []benchrun.Result
	for i, ips := range [][]float64{{100, 101, 99}, {120, 119, 121}, {140, 141, 139}} {
		results = append(results, benchrun.Result{Name: table[i].name(), IPS: ips[0], RoundIPS: ips})
	}
	v, _ := judge(table, results)
	var buf bytes.Buffer
	writeRounds(&buf, table, results, v)
	header, _, _ := strings.Cut(strings.TrimLeft(buf.String(), "\n"), "\n")
	want := benchrun.FormatLevel(v.Level) + " confidence each (95% over all 2 comparisons)"
	if !strings.Contains(header, want) {
		t.Errorf("the rounds header lacks %q:\n%s", want, header)
	}
}
