package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// steady is a measured result whose ten slices ran at ips, give or take
// wobble (a fraction), alternately.
func steady(name string, ips, wobble float64) benchrun.Result {
	r := benchrun.Result{Name: name, Status: benchrun.StatusOK, Ops: int64(ips), IPS: ips,
		Window: time.Second, Latency: benchrun.Latency{Mean: time.Millisecond}}
	for i := range 10 {
		r.SliceIPS = append(r.SliceIPS, ips*(1+wobble*float64(1-2*(i%2))))
	}
	return r
}

// verdictReport is a run of three tables: a clear win, a tie at the top
// with one case beyond it, and a comparison that could not be judged.
func verdictReport() *benchrun.Report {
	few := steady("single_conn", 900, 0.05)
	few.Latency.Mean = 600 * time.Millisecond // longer than half the window
	return &benchrun.Report{
		Machine: benchrun.Machine{CPU: "AMD EPYC", Cores: 2},
		Scenarios: []benchrun.ScenarioResult{
			{Name: "churn", Groups: []benchrun.GroupResult{{Title: "8 workers", Workers: 8, Results: []benchrun.Result{
				steady("new_conn_per_request", 1730, 0.05), steady("pooled", 65570, 0.02),
			}}}},
			{Name: "partitions", Groups: []benchrun.GroupResult{{Title: "8 workers", Workers: 8, Results: []benchrun.Result{
				steady("1x32", 65400, 0.10), steady("8x4", 71390, 0.10), steady("4x8", 66930, 0.10), steady("2x16", 30000, 0.02),
				{Name: "16x2", Status: benchrun.StatusFailed, Reason: "setup: refused"},
			}}}},
			{Name: "multiplex", Groups: []benchrun.GroupResult{{Title: "gRPC, 400 workers", Workers: 400, Results: []benchrun.Result{
				steady("shoalgrpc_4_conns", 3570, 0.05), few,
			}}}},
		},
	}
}

// TestVerdictSaysWhoWonAndWhatNext: the bench ends with what each table
// says, in a sentence, and what to run next.
func TestVerdictSaysWhoWonAndWhatNext(t *testing.T) {
	var buf bytes.Buffer
	writeVerdict(&buf, &options{rounds: 1, quick: true, duration: quickBenchDuration}, verdictReport(), nil)
	out := buf.String()
	for _, want := range []string{
		"Verdict for this machine (AMD EPYC, 2 cores) and the embedded servers:",
		"- churn, 8 workers: pooled won: new_conn_per_request was 37.9x slower, beyond the noise.",
		"- partitions, 8 workers: 8x4 came first, but 4x8 and 1x32 were within the noise of it (1.07x to\n  1.09x slower); 2x16 was 2.38x slower, beyond the noise (16x2 failed: see above).",
		"- multiplex, gRPC, 400 workers: shoalgrpc_4_conns came first: single_conn was 3.97x slower (the\n  noise not judged).",
		"Beyond the noise: at 95% confidence over each table's comparisons, judged on the spread of ops/s",
		"- 3 differences were within the noise or not judged in one window: without --rounds 1, every case",
		"- This was --quick, 150ms windows: without it each window lasts 500ms",
		"- Measure your own server: shoal bench --target postgres://user@host/db",
		"- Size a PostgreSQL pool: shoal sweep --target postgres://user@host/db",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("verdict lacks %q:\n%s", want, out)
		}
	}
}

// roundsReport is verdictReport measured in rounds that disagree from
// case to case, so that close cases stay within the noise.
func roundsReport() *benchrun.Report {
	rep := verdictReport()
	for i := range rep.Scenarios {
		for j := range rep.Scenarios[i].Groups {
			for k := range rep.Scenarios[i].Groups[j].Results {
				r := &rep.Scenarios[i].Groups[j].Results[k]
				r.RoundIPS = []float64{r.IPS * 0.9, r.IPS * 1.1, r.IPS}
				if k%2 == 1 {
					r.RoundIPS = []float64{r.IPS * 1.1, r.IPS * 0.9, r.IPS}
				}
			}
		}
	}
	return rep
}

// TestVerdictForATarget: against a PostgreSQL target, the next step is
// the sweep of that target, its password masked; after rounds, more
// rounds.
func TestVerdictForATarget(t *testing.T) {
	tg, err := parseTarget("postgres://app:s3cret@db.example:5432/app")
	if err != nil {
		t.Fatal(err)
	}
	rep := roundsReport()
	var buf bytes.Buffer
	writeVerdict(&buf, &options{rounds: 3}, rep, tg)
	out := buf.String()
	for _, want := range []string{
		"and postgres://app:REDACTED@db.example:5432/app:",
		"judged round by round over 3",
		"more rounds (--rounds 6)",
		"shoal sweep --target 'postgres://app:REDACTED@db.example:5432/app'",
		"(put your password back in)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("verdict lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret") || strings.Contains(out, "This was --quick") || strings.Contains(out, "Measure your own server") {
		t.Errorf("verdict for a target:\n%s", out)
	}
}

// TestVerdictQuickAdviceOnlyForShortWindows guards the --quick advice: a
// --duration as long as the default's or longer gets no advice to drop
// --quick for longer windows.
func TestVerdictQuickAdviceOnlyForShortWindows(t *testing.T) {
	for _, c := range []struct {
		duration time.Duration
		advice   bool
	}{
		{quickBenchDuration, true},
		{defaultBenchDuration, false},
		{2 * time.Second, false},
	} {
		var buf bytes.Buffer
		writeVerdict(&buf, &options{rounds: 1, quick: true, duration: c.duration}, verdictReport(), nil)
		if got := strings.Contains(buf.String(), "This was --quick"); got != c.advice {
			t.Errorf("--quick --duration %s: advice %v, want %v:\n%s", c.duration, got, c.advice, buf.String())
		}
	}
}

// TestVerdictAdvisesRoundsItAccepts: the advice to run more rounds never
// names more than --rounds takes.
func TestVerdictAdvisesRoundsItAccepts(t *testing.T) {
	for _, c := range []struct {
		rounds int
		want   string
	}{
		{3, "more rounds (--rounds 6)"},
		{60, "more rounds (--rounds 100)"},
		{100, "a quieter machine"},
	} {
		var buf bytes.Buffer
		writeVerdict(&buf, &options{rounds: c.rounds}, roundsReport(), nil)
		out := buf.String()
		if !strings.Contains(out, c.want) || strings.Contains(out, "--rounds 120") || strings.Contains(out, "--rounds 200") {
			t.Errorf("--rounds %d: want %q and no --rounds over 100:\n%s", c.rounds, c.want, out)
		}
	}
}

// TestVerdictQuickAdviceOnlyWhenQuickChoseTheWindow: with --duration
// given beside --quick, dropping --quick would not lengthen the windows,
// so the verdict does not say it would.
func TestVerdictQuickAdviceOnlyWhenQuickChoseTheWindow(t *testing.T) {
	for _, c := range []struct {
		args   []string
		advice bool
	}{
		{[]string{"--quick"}, true},
		{[]string{"--quick", "--duration", "50ms"}, false},
		{[]string{"--quick", "--duration", quickBenchDuration.String()}, false},
	} {
		o, err := parseFlags("bench", append(c.args, "--rounds", "1"))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		writeVerdict(&buf, o, verdictReport(), nil)
		if got := strings.Contains(buf.String(), "This was --quick"); got != c.advice {
			t.Errorf("%v: advice %v, want %v:\n%s", c.args, got, c.advice, buf.String())
		}
	}
}
