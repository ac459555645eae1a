package benchrun

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"
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
