package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// TestBenchQuickJSON runs every scenario against the embedded servers and
// checks the JSON's shape and that each case that ran produced numbers.
func TestBenchQuickJSON(t *testing.T) {
	r := runShoal(t, append([]string{"bench", "--quick", "--json"}, benchTimes...)...)
	r.wantCode(t, exitOK)
	var rep benchrun.Report
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("stdout is not the report's JSON: %v\n%s", err, r.stdout)
	}
	if rep.Command != "bench" || rep.Target != "embedded" || rep.Interrupted {
		t.Errorf("command %q target %q interrupted %v", rep.Command, rep.Target, rep.Interrupted)
	}
	if rep.Machine.Cores < 1 || rep.Machine.GoVersion == "" {
		t.Errorf("machine not described: %+v", rep.Machine)
	}
	if rep.Duration != 120*time.Millisecond || rep.Warmup != 20*time.Millisecond {
		t.Errorf("duration %v warmup %v, want the flags' 120ms and 20ms", rep.Duration, rep.Warmup)
	}
	var names []string
	for _, s := range rep.Scenarios {
		names = append(names, s.Name)
		if s.Skipped != "" {
			t.Errorf("scenario %s skipped on the embedded servers: %s", s.Name, s.Skipped)
			continue
		}
		measured := 0
		for _, g := range s.Groups {
			if g.Workers < 1 || g.Title == "" {
				t.Errorf("%s: group %+v lacks a title or workers", s.Name, g)
			}
			for _, res := range g.Results {
				switch res.Status {
				case benchrun.StatusSkipped:
					if !strings.Contains(res.Reason, "has not landed yet") {
						t.Errorf("%s/%s skipped for an unexpected reason: %s", s.Name, res.Name, res.Reason)
					}
					if res.Ops != 0 || res.IPS != 0 {
						t.Errorf("%s/%s is skipped but reports numbers", s.Name, res.Name)
					}
				case benchrun.StatusOK:
					measured++
					l := res.Latency
					if res.Ops <= 0 || res.IPS <= 0 || res.Elapsed <= 0 || l.Mean <= 0 || l.Median <= 0 || l.P99 <= 0 || l.Samples <= 0 {
						t.Errorf("%s/%s: want numbers > 0, got %+v", s.Name, res.Name, res)
					}
					if l.Min > l.Median || l.Median > l.P99 || l.P99 > l.Max {
						t.Errorf("%s/%s: percentiles out of order: %+v", s.Name, res.Name, l)
					}
					if res.Errors != 0 {
						t.Errorf("%s/%s: %d errors", s.Name, res.Name, res.Errors)
					}
				default:
					t.Errorf("%s/%s: status %s: %s", s.Name, res.Name, res.Status, res.Reason)
				}
			}
		}
		if measured == 0 {
			t.Errorf("scenario %s measured nothing", s.Name)
		}
	}
	if want := scenarioNames(); !slices.Equal(names, want) {
		t.Errorf("scenarios %v, want %v", names, want)
	}
	// Every case says how many connections it opened from its start and
	// while measured: a pool opens its own before the window and none in
	// it, a connection per request opens them in the window.
	for _, g := range rep.Scenarios[0].Groups {
		for _, res := range g.Results {
			if res.ConnsOpenedTotal == nil || res.ConnsOpened == nil || len(res.SliceIPS) != 10 || res.Window != 120*time.Millisecond {
				t.Errorf("churn/%s: opened %v in all, %v while measured, %d slices of %v", res.Name, res.ConnsOpenedTotal, res.ConnsOpened, len(res.SliceIPS), res.Window)
				continue
			}
			total, during := *res.ConnsOpenedTotal, *res.ConnsOpened
			switch res.Name {
			case "pooled":
				if total != int64(g.Workers) || during != 0 {
					t.Errorf("churn/pooled opened %d in all, %d while measured; want %d and 0", total, during, g.Workers)
				}
			case "new_conn_per_request":
				if during < 1 || total < during {
					t.Errorf("churn/new_conn_per_request opened %d in all, %d while measured", total, during)
				}
			}
		}
	}
	// Pooled cases report their acquire waits.
	for _, s := range rep.Scenarios {
		for _, g := range s.Groups {
			for _, res := range g.Results {
				if res.Status == benchrun.StatusOK && s.Name == "partitions" && res.AcquireWait == nil {
					t.Errorf("partitions/%s: no acquire-wait percentiles", res.Name)
				}
			}
		}
	}
}

// TestBenchTableAndCSV checks the Benchee-style table and the CSV of a short run.
func TestBenchTableAndCSV(t *testing.T) {
	r := runShoal(t, append([]string{"bench", "--only", "churn"}, benchTimes...)...)
	r.wantCode(t, exitOK)
	for _, want := range []string{
		"8 workers (fastest first)", "Name", "ops/s", "spread", "mean (", "p50 (", "p99 (",
		"ops/s: operations per second by all 8 workers in the 120 ms measured window, after a warm-up of",
		"Comparison, each against the fastest:", "x slower (+", " per op)", "Nx slower: the fastest's ops/s",
		"per op: the longer time per operation that means",
		"opened", "while measured", "setup and warm-up included",
		"pooled", "new_conn_per_request", "Estimated total run time",
		"Verdict for this machine", "What to try next", "without --rounds 1",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.stdout)
		}
	}
	// The per-op figure comes from ops/s, as the ratio does: a case slower
	// by ops/s never reads as quicker per operation.
	if strings.Contains(r.stdout, "slower (-") {
		t.Errorf("a slower case reads as quicker per op:\n%s", r.stdout)
	}
	header, _, _ := strings.Cut(r.stdout[strings.Index(r.stdout, "\nName "):], "\n"+"pooled")
	for _, gone := range []string{"ips ", "average", "deviation", "99th %", "μs"} {
		if strings.Contains(header, gone) {
			t.Errorf("table header still says %q: %s", gone, header)
		}
	}
	if strings.Contains(r.stdout, "## partitions") {
		t.Errorf("--only churn ran more than churn:\n%s", r.stdout)
	}

	r = runShoal(t, append([]string{"bench", "--only", "churn", "--csv"}, benchTimes...)...)
	r.wantCode(t, exitOK)
	rows, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil {
		t.Fatalf("stdout is not CSV: %v\n%s", err, r.stdout)
	}
	if len(rows) != 3 || rows[0][0] != "scenario" || rows[1][0] != "churn" {
		t.Fatalf("want a header and 2 churn rows, got %q", rows)
	}
	for _, row := range rows[1:] {
		if len(row) != len(rows[0]) {
			t.Errorf("row %q has %d fields, header %d", row, len(row), len(rows[0]))
		}
	}
}

// TestBenchCharts checks that --chart writes a valid SVG and a valid PNG.
func TestBenchCharts(t *testing.T) {
	dir := t.TempDir()
	svgPath, pngPath := filepath.Join(dir, "bench.svg"), filepath.Join(dir, "bench.png")
	r := runShoal(t, append([]string{"bench", "--only", "churn", "--json", "--chart", svgPath}, benchTimes...)...)
	r.wantCode(t, exitOK)
	var rep benchrun.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	// With --json on stdout, where the chart went is said on stderr.
	if !strings.Contains(r.stderr, "Chart written to "+svgPath) {
		t.Errorf("stderr does not say where the chart is:\n%s", r.stderr)
	}

	// Under the tables too: stdout sent to a file holds the results only.
	r = runShoal(t, append([]string{"bench", "--only", "churn", "--chart", svgPath}, benchTimes...)...)
	r.wantCode(t, exitOK)
	if strings.Contains(r.stdout, "Chart written") || !strings.Contains(r.stderr, "Chart written to "+svgPath) {
		t.Errorf("the chart's note belongs on stderr:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}

	svg, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	var root struct{ XMLName xml.Name }
	if err := xml.Unmarshal(svg, &root); err != nil {
		t.Fatalf("chart is not XML: %v", err)
	}
	if root.XMLName.Local != "svg" {
		t.Fatalf("chart's root element is <%s>, want <svg>", root.XMLName.Local)
	}

	if err := benchrun.WriteChartFile(pngPath, &rep); err != nil {
		t.Fatal(err)
	}
	f, err := os.ReadFile(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(f))
	if err != nil {
		t.Fatalf("chart is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Errorf("PNG is only %v", b)
	}
}

// TestBenchInterrupted cancels a run midway, as Ctrl-C does: what finished
// (or the line of the case that was running) is printed, and the status is
// 130. The run is planned to take far longer than the test waits.
func TestBenchInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	defer cancel()
	r := runShoalCtx(t, ctx, "bench", "--only", "churn,partitions", "--duration", "1s", "--warmup", "0s")
	r.wantCode(t, exitInterrupted)
	if !strings.Contains(r.stdout, "## churn") {
		t.Errorf("nothing of the run was printed:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "interrupted —") && !strings.Contains(r.stdout, "Comparison:") {
		t.Errorf("neither the finished results nor the interrupted case were printed:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "interrupted") {
		t.Errorf("stderr does not say it was interrupted:\n%s", r.stderr)
	}
}

// TestBenchRounds: by default every case runs three times, the figures
// are the rounds', and the verdict judges round by round.
func TestBenchRounds(t *testing.T) {
	r := runShoal(t, append([]string{"bench", "--only", "churn"}, testTimes...)...)
	r.wantCode(t, exitOK)
	for _, want := range []string{
		"rounds: 3 (every case once a round, the order reversed each round)",
		"the mean of 3 rounds", "judged round by round", "judged round by round over 3",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runShoal(t, append([]string{"bench", "--only", "churn", "--rounds", "2", "--json"}, testTimes...)...)
	r.wantCode(t, exitOK)
	var rep benchrun.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	for _, res := range rep.Scenarios[0].Groups[0].Results {
		if len(res.RoundIPS) != 2 {
			t.Errorf("%s: %d rounds, want 2", res.Name, len(res.RoundIPS))
		}
	}
}

// TestPartitionsHeadingMatchesRows: the heading names each configuration
// rather than a row the speed-sorted table may not put last.
func TestPartitionsHeadingMatchesRows(t *testing.T) {
	d := partitionsScenario.description
	if strings.Contains(d, "last row") {
		t.Errorf("heading refers to the last row of a table sorted by speed: %s", d)
	}
	for _, pc := range ectoTable {
		if !strings.Contains(d, partitionCaseName(pc)) {
			t.Errorf("heading lacks %s: %s", partitionCaseName(pc), d)
		}
	}
}
