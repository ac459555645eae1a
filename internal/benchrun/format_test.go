package benchrun

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestFormatThreeSignificantDigits(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{FormatOps(0.0407), "0.0407"},
		{FormatOps(0.00822), "0.00822"},
		{FormatOps(164.07), "164"},
		{FormatOps(65570.4), "65,570"},
		{FormatOps(1234567), "1,234,567"},
		{FormatOps(9.996), "10.0"},
		{FormatInt(2165), "2,165"},
		{FormatRatio(1.0312), "1.03x"},
		{FormatRatio(37.96), "38.0x"},
		{FormatRatio(142.4), "142x"},
		{FormatDuration(24590 * time.Millisecond), "24.6 s"},
		{FormatDuration(122 * time.Second), "2.03 min"},
		{FormatDuration(288060 * time.Nanosecond), "288 µs"},
		{FormatDuration(895 * time.Nanosecond), "895 ns"},
		{formatSetting(2 * time.Second), "2 s"},
		{formatSetting(500 * time.Millisecond), "500 ms"},
		{formatSetting(1250 * time.Millisecond), "1.25 s"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestColumnUnitIsOnePerColumn: the column that read "0.136 ms",
// "116.55 μs" and "9339.91 μs" is in one unit.
func TestColumnUnitIsOnePerColumn(t *testing.T) {
	for _, tc := range []struct {
		ns   []float64
		want string
	}{
		{[]float64{136e3, 116.55e3, 9339.91e3}, "µs"},       // 136, 117, 9,340
		{[]float64{797e3, 1.16e6, 27.17e6, 477.39e6}, "ms"}, // 477,390 µs would be six digits
		{[]float64{105e6, 322e6, 1.11e9}, "ms"},             // 105 to 1,110
		{[]float64{0, 0, 0}, "µs"},                          // nothing waited
		{[]float64{0, 120, 1200, 9080}, "ns"},               // zeros do not count
		{[]float64{24.59e9, 45.13e9}, "s"},                  // the seed's 24.6 s and 45.1 s
		{[]float64{151, 291, 4.05e6, 7.81e6}, "µs"},         // 0.151 to 7,810
		{[]float64{999}, "ns"},                              // 999
		{[]float64{800, 200e6}, "µs"},                       // 0.800 to 200,000: one unit up, no more
	} {
		if got := columnUnit(tc.ns).name; got != tc.want {
			t.Errorf("columnUnit(%v) = %s, want %s", tc.ns, got, tc.want)
		}
	}
}

// groupOf builds a measured result whose ten slices ran at ips*(1+d) for
// each d of wobble, repeated.
func groupOf(name string, ips float64, mean, median, p99 time.Duration, wobble ...float64) Result {
	slices := make([]float64, sliceCount)
	for i := range slices {
		slices[i] = ips * (1 + wobble[i%len(wobble)])
	}
	return Result{Name: name, Status: StatusOK, Ops: int64(ips), IPS: ips, Workers: 8,
		Window: time.Second, SliceIPS: slices,
		Latency: Latency{Mean: mean, Median: median, P99: p99, Samples: 100}}
}

// TestTableLayout checks a whole group as a reader sees it: ops/s, not
// ips; one unit per column, named in its header; percentiles instead of a
// deviation of hundreds of percent; comparisons in a sensible unit, with
// whether they are beyond the noise; connections counted from the start
// and in the window; and a legend under each table.
func TestTableLayout(t *testing.T) {
	opened := func(total, during int64) (*int64, *int64) { return &total, &during }
	pooled := groupOf("pooled", 65570, 122*time.Microsecond, 88300*time.Nanosecond, 915*time.Microsecond, 0.02, -0.02, 0.01, -0.01)
	pooled.ConnsOpenedTotal, pooled.ConnsOpened = opened(8, 0)
	pooled.AcquireWait = &Wait{P50: 0, P99: 120, P999: 9080}
	near := groupOf("pooled_too", 63600, 123*time.Microsecond, 89*time.Microsecond, 950*time.Microsecond, 0.08, -0.08, 0.04, -0.04)
	near.ConnsOpenedTotal, near.ConnsOpened = opened(8, 0)
	near.AcquireWait = &Wait{P50: 0, P99: 1200, P999: 4000}
	unpooled := groupOf("new_conn_per_request", 1730, 4630*time.Microsecond, 4290*time.Microsecond, 13380*time.Microsecond, 0.05, -0.05)
	unpooled.ConnsOpenedTotal, unpooled.ConnsOpened = opened(2600, 2165)
	g := &GroupResult{Title: "8 workers", Workers: 8, Results: []Result{
		unpooled, near, pooled,
		{Name: "shoalhttp", Status: StatusSkipped, Reason: "shoalhttp has not landed yet"},
	}}
	var buf bytes.Buffer
	WriteGroup(&buf, &Report{Warmup: 250 * time.Millisecond, Duration: 1250 * time.Millisecond}, "churn", g)
	want := `
8 workers (fastest first)
Name                    ops/s   spread   mean (µs)   p50 (µs)   p99 (µs)
pooled                 65,570      ±2%         122       88.3        915
pooled_too             63,600      ±7%         123       89.0        950
new_conn_per_request    1,730      ±5%       4,630      4,290     13,380
  ops/s: operations per second by all 8 workers in the 1.25 s measured window, after a warm-up of
  250 ms and an operation per worker (not counted); spread: standard deviation / mean of ops/s over
  the window's 10 slices. mean, p50, p99: time per operation (p50: half took longer; p99: 1 in 100
  did), percentiles because a ± on skewed latencies says little.

Comparison, each against the fastest:
pooled                 65,570 ops/s
pooled_too             63,600 ops/s   1.03x slower (+3.78 µs per op)   within the noise (0.970x to 1.10x)
new_conn_per_request    1,730 ops/s   37.9x slower (+4.50 ms per op)   beyond the noise (36.2x to 39.7x)
  Nx slower: the fastest's ops/s over this one's; per op: the longer time per operation that means
  (workers / ops/s, less the fastest's). Beyond the noise: the ratio's interval (97.5% each, 95%
  over 2 comparisons) excludes 1x, judged on the spread of each case's slices (not on load changes
  between cases: --rounds catches those).

Connections and acquire wait:
Name                   opened   while measured   wait p50 (ns)   wait p99 (ns)   wait p99.9 (ns)
pooled                      8                0               0             120             9,080
pooled_too                  8                0               0           1,200             4,000
new_conn_per_request    2,600            2,165               -               -                 -
  opened: connections opened since the case began, setup and warm-up included; while measured: in
  the 1.25 s window only. wait: time an operation waited for a connection in the window (the pool's
  observer, or the case's own timing); -: no pool.
churn: skipped — shoalhttp has not landed yet
`
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestTableLayoutRounds: with rounds, the legends say the figures are
// the rounds' and the noise is judged round by round.
func TestTableLayoutRounds(t *testing.T) {
	a := groupOf("a", 1000, time.Millisecond, time.Millisecond, 2*time.Millisecond, 0)
	b := groupOf("b", 500, 2*time.Millisecond, 2*time.Millisecond, 4*time.Millisecond, 0)
	a.RoundIPS, b.RoundIPS = []float64{900, 1000, 1100}, []float64{450, 500, 560}
	var buf bytes.Buffer
	WriteGroup(&buf, &Report{Warmup: 100 * time.Millisecond, Duration: 400 * time.Millisecond, Rounds: 3}, "s", &GroupResult{Title: "2 workers", Workers: 2, Results: []Result{a, b}})
	out := buf.String()
	for _, want := range []string{"the mean of 3 rounds", "over the rounds", "in the median round", "judged round by round", "beyond the noise"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestComparisonPerOpAgreesWithRatio: a case slower by ops/s whose mean
// latency is the lower (its rounds' mean against its median round's
// latency, say) still reads as longer per operation, never "1.01x slower
// (-30.9 µs per op)": the per-op figure comes from ops/s, as the ratio does.
func TestComparisonPerOpAgreesWithRatio(t *testing.T) {
	fast := groupOf("fast", 101000, 1030*time.Microsecond, time.Millisecond, 2*time.Millisecond, 0.01, -0.01)
	slow := groupOf("slow", 100000, 1000*time.Microsecond, time.Millisecond, 2*time.Millisecond, 0.01, -0.01)
	fast.Workers, slow.Workers = 100, 100
	var buf bytes.Buffer
	WriteGroup(&buf, &Report{Duration: time.Second}, "s", &GroupResult{Title: "100 workers", Workers: 100, Results: []Result{slow, fast}})
	out := buf.String()
	// 100 workers: 100/100,000 s = 1 ms per op against 100/101,000 s = 990.1 µs.
	if want := "1.01x slower (+9.90 µs per op)"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	if strings.Contains(out, "(-") {
		t.Errorf("a slower case reads as quicker per op:\n%s", out)
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

func TestPlural(t *testing.T) {
	if got := Plural(32, "partition") + " x " + Plural(1, "connection"); got != "32 partitions x 1 connection" {
		t.Errorf("Plural: %s", got)
	}
}
