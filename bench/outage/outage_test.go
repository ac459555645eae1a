package main

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// A tiny run of every case this machine can run produces a report with
// every section, each table well formed and followed by its legend, and no
// password in it. The shared server's cases run when SHOAL_TEST_POSTGRES
// is set (they fail without it under SHOAL_REQUIRE_SERVICES=1), the
// throwaway server's when this process may start one (root or postgres)
// and -short is not given.
func TestTinyRunReport(t *testing.T) {
	dsn := os.Getenv("SHOAL_TEST_POSTGRES")
	if dsn == "" && os.Getenv("SHOAL_REQUIRE_SERVICES") == "1" {
		t.Fatal("SHOAL_TEST_POSTGRES is not set and SHOAL_REQUIRE_SERVICES=1")
	}
	tiny := downSpec{workerSpec: workerSpec{workers: 4, deadline: 300 * time.Millisecond, failPause: 10 * time.Millisecond},
		maxConns: 2, warm: 100 * time.Millisecond, before: 300 * time.Millisecond, down: 300 * time.Millisecond, after: 500 * time.Millisecond, rounds: 1}
	o := options{
		dsn:      dsn,
		never:    neverSpec{tries: 1, deadline: 3 * time.Second, window: 200 * time.Millisecond, dsn: dsn},
		pgDown:   tiny,
		httpDown: tiny,
		giveUp:   giveUpSpec{callers: 8, maxConns: 2, duration: 300 * time.Millisecond, every: 10, deadline: 2 * time.Millisecond},
		atServer: atServerSpec{callers: 4, maxConns: 2, duration: 300 * time.Millisecond, abandon: 50 * time.Millisecond, poll: 20 * time.Millisecond},
		cases:    []string{caseNever, caseHTTPDown},
	}
	o.httpDown.rounds = 2 // a row per round, and the order reversed in the second
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	if _, err := serverUser(); err == nil && !testing.Short() {
		o.cases = append(o.cases, casePGDown)
	} else {
		t.Logf("no throwaway server: %v (or -short)", err)
	}
	if dsn != "" {
		o.cases = append(o.cases, caseGiveUp, caseAtServer)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	md, err := run(ctx, o, "go run ./outage (test)")
	t.Log("\n" + md)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(md, "### Outages: how pools fail\n\nMachine: ") || !strings.Contains(md, "\nCommand (from bench/") {
		t.Error("the report does not open with its title, the machine and the command")
	}
	headings := map[string]string{
		caseNever:    "#### Never connected",
		caseHTTPDown: "#### HTTP server down",
		casePGDown:   "#### PostgreSQL down",
		caseGiveUp:   "#### Callers that give up",
		caseAtServer: "#### MaxConns at the server",
	}
	for _, c := range o.cases {
		if !strings.Contains(md, headings[c]) {
			t.Errorf("case %s: no section %q", c, headings[c])
		}
	}
	if strings.Contains(md, "Not run:") {
		t.Error("a case did not run")
	}
	for _, secret := range []string{password(dsn), tempPassword, "not-the-password"} {
		if secret != "" && strings.Contains(md, secret) {
			t.Errorf("the report holds a password (%d bytes)", len(secret))
		}
	}
	tables := checkTables(t, md)
	// never: the refused clients, then (with a server) the logins;
	// http-down and pg-down one each; give-up its rows and targets;
	// at-server one.
	want := 1 + 1
	if dsn != "" {
		want += 1 + 2 + 1
	}
	if slices.Contains(o.cases, casePGDown) {
		want++
	}
	if tables != want {
		t.Errorf("%d tables, want %d", tables, want)
	}
	for _, row := range []string{"| shoal core (net.Conn) |", "| shoalhttp GET |", "| net/http GET |", "| shoalpgx Ping |", "| pgxpool Ping |",
		"| 1 | shoalhttp |", "| 1 | net/http |", "| 2 | net/http |", "| 2 | shoalhttp |"} {
		if !strings.Contains(md, row) {
			t.Errorf("no row %q", row)
		}
	}
}

// checkTables checks that every Markdown table in md has a header, an
// alignment row and rows of as many cells, and a legend paragraph under
// it, and returns how many tables there are.
func checkTables(t *testing.T, md string) int {
	t.Helper()
	lines := strings.Split(md, "\n")
	tables := 0
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "|") {
			continue
		}
		tables++
		cols := cells(lines[i])
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "|---|") || cells(lines[i+1]) != cols {
			t.Errorf("table at line %d: no alignment row of %d columns", i+1, cols)
		}
		j := i + 2
		rows := 0
		for ; j < len(lines) && strings.HasPrefix(lines[j], "|"); j++ {
			rows++
			if n := cells(lines[j]); n != cols {
				t.Errorf("line %d: %d cells, the header has %d: %s", j+1, n, cols, lines[j])
			}
			if strings.Contains(lines[j], "||") || strings.Contains(lines[j], "|  |") {
				t.Errorf("line %d: an empty cell: %s", j+1, lines[j])
			}
		}
		if rows == 0 {
			t.Errorf("table at line %d has no rows", i+1)
		}
		if j+1 >= len(lines) || lines[j] != "" || lines[j+1] == "" || strings.HasPrefix(lines[j+1], "|") || strings.HasPrefix(lines[j+1], "#") {
			t.Errorf("table at line %d: no legend under it", i+1)
		}
		i = j
	}
	return tables
}

// cells counts a table line's cells.
func cells(line string) int {
	return strings.Count(strings.TrimSpace(line), "|") - 1
}

// window counts the dials begun in it, those that connected, and the most
// under way at once, those begun before it and still under way included.
func TestWindow(t *testing.T) {
	ms := time.Millisecond
	as := []attempt{
		{start: 1 * ms, end: 50 * ms},            // under way as the window opens
		{start: 12 * ms, end: 14 * ms, ok: true}, // inside
		{start: 13 * ms, end: 15 * ms},           // beside the one before
		{start: 15 * ms, end: 16 * ms},           // begins as the one before ends: not beside it
		{start: 18 * ms},                         // still under way
		{start: 30 * ms, end: 31 * ms, ok: true}, // after the window
		{start: 2 * ms, end: 5 * ms},             // over before it
	}
	got := window(as, 10*ms, 20*ms)
	if want := (dialFigures{started: 4, connected: 1, mostInFlight: 3}); got != want {
		t.Fatalf("window = %+v, want %+v", got, want)
	}
}

// Recovery is the end of the first bucket after the return with 80% of the
// rate before; never when none has.
func TestRecoveryTime(t *testing.T) {
	ms := time.Millisecond
	var ends []time.Duration
	add := func(from time.Duration, n int) { // n calls within the bucket from from
		for k := range n {
			ends = append(ends, from+time.Duration(k)*ms/10)
		}
	}
	// 1000/s before is 10 a bucket: 80% is 8.
	add(1000*ms, 3)
	add(1010*ms, 7)
	add(1020*ms, 8)
	add(1030*ms, 10)
	if got := recoveryTime(ends, 1000*ms, 1050*ms, 1000); got != 30*ms {
		t.Errorf("recoveryTime = %v, want 30ms", got)
	}
	if got := recoveryTime(ends[:10], 1000*ms, 1050*ms, 1000); got != never {
		t.Errorf("recoveryTime without a full bucket = %v, want never", got)
	}
	if got := reachedAfter([]countSample{{at: 5 * ms, count: 8}, {at: 20 * ms, count: 7}, {at: 30 * ms, count: 8}}, 10*ms, 8); got != 20*ms {
		t.Errorf("reachedAfter = %v, want 20ms", got)
	}
}
