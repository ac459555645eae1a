package main

import (
	"strings"
	"testing"
	"time"
)

func TestPairedRatios(t *testing.T) {
	// Three contenders, the last being shoalhttp; three rounds. Round 2 is
	// slow for everyone: pairing keeps it from skewing the ratio.
	perRound := [][]float64{
		{100, 200, 300},
		{10, 20, 40},
		{100, 250, 250},
	}
	got := pairedRatios(perRound)
	want := []float64{3, 1.5} // medians of {3, 4, 2.5} and {1.5, 2, 1}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("ratio %d = %v, want %v", i, got[i], want[i])
		}
	}
	if r := pairedRatios(nil); r != nil {
		t.Errorf("no rounds: %v, want nil", r)
	}
}

func TestMarkdownTables(t *testing.T) {
	r := results{
		contenders: []contender{{name: "default"}, {name: "shoalhttp"}},
		rows: []row{{target: "T", workers: 4, rps: []float64{100, 150}, cpu: []float64{10, 8.5},
			pairedRatio: []float64{1.4}}},
	}
	md := r.markdown("cmd", "machine", 3, time.Second)
	for _, want := range []string{
		"| target | workers | default req/s | shoalhttp req/s | shoalhttp / default |",
		"| T | 4 | 100 | 150 | 1.50x |",
		"| target | workers | shoalhttp / default |\n|---|---:|---:|\n| T | 4 | 1.40x |",
		"| target | workers | default | shoalhttp |\n|---|---:|---:|---:|\n| T | 4 | 10.0 | 8.5 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
