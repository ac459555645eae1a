package benchrun

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
)

// sampleReport is a small report with two scenarios, one a sweep.
func sampleReport() *Report {
	res := func(name string, ips float64, median time.Duration, pool *PoolConfig) Result {
		return Result{Name: name, Status: StatusOK, Ops: 100, IPS: ips, Pool: pool,
			Latency: Latency{Mean: median, Median: median, P99: 3 * median, Samples: 100}}
	}
	return &Report{Scenarios: []ScenarioResult{
		{Name: "churn", Groups: []GroupResult{{Title: "8 workers", Workers: 8, Results: []Result{
			res("pooled", 20000, 100*time.Microsecond, nil),
			res("new_conn_per_request", 300, 30*time.Millisecond, nil),
			{Name: "shoalhttp", Status: StatusSkipped, Reason: "shoalhttp has not landed yet"},
		}}}},
		{Name: "partitions", Groups: []GroupResult{
			{Title: "8 workers", Workers: 8, Results: []Result{
				res("1x32", 15000, 90*time.Microsecond, &PoolConfig{MaxConns: 32, Partitions: 1, ConnsPerPartition: 32}),
				res("2x16", 16000, 80*time.Microsecond, &PoolConfig{MaxConns: 32, Partitions: 2, ConnsPerPartition: 16}),
			}},
			{Title: "32 workers", Workers: 32, Results: []Result{
				res("1x32", 17000, 400*time.Microsecond, &PoolConfig{MaxConns: 32, Partitions: 1, ConnsPerPartition: 32}),
				res("2x16", 18000, 380*time.Microsecond, &PoolConfig{MaxConns: 32, Partitions: 2, ConnsPerPartition: 16}),
			}},
		}},
	}}
}

func TestWriteChartSVG(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteChart(&buf, "svg", sampleReport()); err != nil {
		t.Fatal(err)
	}
	var root struct{ XMLName xml.Name }
	if err := xml.Unmarshal(buf.Bytes(), &root); err != nil || root.XMLName.Local != "svg" {
		t.Fatalf("not an SVG document (root %q): %v", root.XMLName.Local, err)
	}
}

func TestWriteChartPNG(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteChart(&buf, "png", sampleReport()); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if dir := os.Getenv("SHOAL_CHART_OUT"); dir != "" {
		os.WriteFile(dir+"/sample.png", buf.Bytes(), 0o644)
	}
}

func TestWriteChartNothingMeasured(t *testing.T) {
	r := &Report{Scenarios: []ScenarioResult{{Name: "x", Skipped: "not here"}}}
	if err := WriteChart(&bytes.Buffer{}, "svg", r); err == nil {
		t.Fatal("want an error for a report with no numbers")
	}
}

// TestWriteChartFileKeepsTheOldChartOnError: a chart that cannot be drawn
// leaves the file already at the path as it was, and no temporary file.
func TestWriteChartFileKeepsTheOldChartOnError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keep.svg")
	if err := os.WriteFile(path, []byte("the last good chart"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &Report{Scenarios: []ScenarioResult{{Name: "x", Skipped: "not here"}}}
	if err := WriteChartFile(path, r); err == nil {
		t.Fatal("want an error for a report with no numbers")
	}
	if b, _ := os.ReadFile(path); string(b) != "the last good chart" {
		t.Errorf("the old chart became %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the directory, want only the old chart", len(entries))
	}
}

// TestChartOrderLogAndLabels: bars stand in the tables' order (fastest
// first), on a log axis where 300 ops/s beside 20 K is a bar, each with
// its value written on it.
func TestChartOrderLogAndLabels(t *testing.T) {
	rep := sampleReport()
	if got := strings.Join(tableOrder(&rep.Scenarios[1]), " "); got != "2x16 1x32" {
		t.Errorf("partitions bars in order %s, want the table's: 2x16 1x32", got)
	}
	plots := scenarioPlots(&rep.Scenarios[0])
	if _, ok := plots[0].Y.Scale.(plot.LogScale); !ok || plots[0].Y.Min <= 0 || plots[0].Y.Min > 300 {
		t.Errorf("throughput axis %T from %g: want a log axis below the lowest bar", plots[0].Y.Scale, plots[0].Y.Min)
	}
	var buf bytes.Buffer
	if err := WriteChart(&buf, "svg", rep); err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{">20 K<", ">300<", ">16 K<"} {
		if !strings.Contains(buf.String(), label) {
			t.Errorf("the SVG has no bar labelled %s", label)
		}
	}
}

// TestChartTitle: the title says what ran against what (the password
// masked), quick or full, and the machine and date.
func TestChartTitle(t *testing.T) {
	r := &Report{
		Command: "sweep", Target: "postgres://app:hunter2@db/orders", Quick: true,
		Warmup: 100 * time.Millisecond, Duration: 400 * time.Millisecond, Rounds: 3,
		Machine: Machine{CPU: "AMD EPYC", Cores: 2, Memory: "23.5 GB", OS: "linux", Arch: "amd64", GoVersion: "Go 1.26"},
		Date:    time.Date(2026, 5, 6, 20, 55, 0, 0, time.UTC),
	}
	title, sub := chartTitle(r)+"\n"+chartTarget(r), chartSubtitle(r)
	for _, want := range []string{"shoal sweep", "postgres://app:REDACTED@db/orders", "--quick run", "3 rounds"} {
		if !strings.Contains(title, want) {
			t.Errorf("title %q lacks %q", title, want)
		}
	}
	if strings.Contains(title, "hunter2") {
		t.Errorf("title %q shows the password", title)
	}
	for _, want := range []string{"AMD EPYC, 2 cores", "2026-05-06 20:55 UTC"} {
		if !strings.Contains(sub, want) {
			t.Errorf("subtitle %q lacks %q", sub, want)
		}
	}
	var buf bytes.Buffer
	if err := WriteChart(&buf, "svg", &Report{Scenarios: sampleReport().Scenarios, Command: "bench"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "shoal bench, full run") || !strings.Contains(buf.String(), "against embedded") {
		t.Errorf("the SVG has no title")
	}
}
