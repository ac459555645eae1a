package benchrun

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestFormatLikeBenchee(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{FormatCount(0.0407), "0.0407"},
		{FormatCount(0.00822), "0.00822"},
		{FormatCount(164.07), "164.07"},
		{FormatCount(3470), "3.47 K"},
		{FormatDuration(24590 * time.Millisecond), "24.59 s"},
		{FormatDuration(122 * time.Second), "2.03 min"},
		{FormatDuration(288060 * time.Nanosecond), "288.06 μs"},
		{formatSetting(2 * time.Second), "2 s"},
		{formatSetting(500 * time.Millisecond), "500 ms"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestTableLayout checks the columns against a table from the seeds:
//
//	Name                  ips        average  deviation         median         99th %
//	multi_conn         0.0407        24.59 s     ±0.00%        24.59 s        24.59 s
//	single_conn        0.0222        45.13 s     ±0.00%        45.13 s        45.13 s
func TestTableLayout(t *testing.T) {
	res := func(name string, ips float64, d time.Duration) Result {
		return Result{Name: name, Status: StatusOK, Ops: 1, IPS: ips,
			Latency: Latency{Mean: d, Median: d, P99: d, Samples: 1}}
	}
	g := &GroupResult{Title: "seed", Results: []Result{
		res("single_conn", 0.0222, 45130*time.Millisecond),
		res("multi_conn", 0.0407, 24590*time.Millisecond),
	}}
	var buf bytes.Buffer
	WriteGroup(&buf, "seed", g)
	want := `
seed
Name                  ips        average  deviation         median         99th %
multi_conn         0.0407        24.59 s     ±0.00%        24.59 s        24.59 s
single_conn        0.0222        45.13 s     ±0.00%        45.13 s        45.13 s

Comparison:
multi_conn         0.0407
single_conn        0.0222 - 1.83x slower +20.54 s
`
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestPercentilesAndMoments(t *testing.T) {
	r := newRecorder(4, 1)
	for i := 1; i <= 100; i++ {
		r.add(time.Duration(i))
	}
	if len(r.samples) != 4 {
		t.Fatalf("reservoir kept %d samples, want 4", len(r.samples))
	}
	l := summarizeLatency([]*recorder{r})
	if l.Mean != 50 { // exact from the moments, not the sample: (1+100)/2 = 50.5
		t.Errorf("mean %v, want 50ns", l.Mean)
	}
	sorted := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if p := percentile(sorted, 50); p != 5 {
		t.Errorf("p50 %v, want 5", p)
	}
	if p := percentile(sorted, 99); p != 10 {
		t.Errorf("p99 %v, want 10", p)
	}
	if !strings.Contains(FormatDuration(l.StdDev), "ns") {
		t.Errorf("stddev %v", l.StdDev)
	}
}
