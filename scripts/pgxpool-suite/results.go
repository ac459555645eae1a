//go:build ignore

package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

// event is one line of go test -json (test2json's TestEvent, plus the build
// events of Go 1.24 and later).
type event struct {
	Action      string
	Package     string
	ImportPath  string
	Test        string
	Output      string
	Elapsed     float64
	FailedBuild string
}

// result is what the runs said of one test or subtest.
type result struct {
	status string // pass, fail, skip; run (started, never finished); pause (never resumed)
	output []string
}

// runs is what the go test -json output of one or more runs says, a later
// run's result for a test replacing an earlier one's.
type runs struct {
	results       map[string]*result
	buildOutput   []string
	buildFailed   bool // the tests did not compile
	packageDone   bool // some run reported on the package (pass or fail)
	packageFailed bool
	packageOutput []string // what the package printed outside any test
	allOutput     []string // everything printed, in order
	other         []string // lines that were not JSON
}

// collect reads the go test -json output files of the runs, in order.
func collect(files []string) (*runs, error) {
	rs := &runs{results: map[string]*result{}}
	for _, path := range files {
		events, other, err := readEvents(path)
		if err != nil {
			return nil, err
		}
		rs.other = append(rs.other, other...)
		for _, e := range events {
			if e.Action == "output" {
				rs.allOutput = append(rs.allOutput, e.Output)
			}
			switch {
			case e.Action == "build-output":
				rs.buildOutput = append(rs.buildOutput, e.Output)
			case e.Action == "build-fail":
				rs.buildFailed = true
			case e.Test != "":
				r := rs.results[e.Test]
				if r == nil || e.Action == "run" {
					// A test run again starts afresh.
					r = &result{status: "run"}
					rs.results[e.Test] = r
				}
				switch e.Action {
				case "pass", "fail", "skip", "pause":
					r.status = e.Action
				case "cont":
					r.status = "run"
				case "output":
					r.output = append(r.output, e.Output)
				}
			default: // the package's own events
				switch e.Action {
				case "output":
					rs.packageOutput = append(rs.packageOutput, e.Output)
				case "pass", "skip":
					rs.packageDone = true
				case "fail":
					rs.packageDone, rs.packageFailed = true, true
					if e.FailedBuild != "" {
						rs.buildFailed = true
					}
				}
			}
		}
	}
	return rs, nil
}

// readEvents reads go test -json output; lines that are not JSON (go
// itself may print some) are returned apart.
func readEvents(path string) ([]event, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var events []event
	var other []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			other = append(other, sc.Text()+"\n")
			continue
		}
		events = append(events, e)
	}
	return events, other, sc.Err()
}

// entryResult is the result of a listed name: its own, or, for a name that
// is a prefix of subtests' names without being a test itself (t.Run("a/b")
// makes one subtest, not two), theirs together: failed when one failed or
// did not finish, skipped when all skipped, passed otherwise.
func entryResult(name string, results map[string]*result) *result {
	if r := results[name]; r != nil {
		return r
	}
	var agg *result
	for sub, r := range results {
		if !strings.HasPrefix(sub, name+"/") {
			continue
		}
		if agg == nil {
			agg = &result{status: r.status}
			continue
		}
		switch {
		case r.status == "fail" || r.status == "run" || agg.status == "fail":
			agg.status = "fail"
		case r.status == "pass" || agg.status == "pass":
			agg.status = "pass"
		}
	}
	return agg
}

// leafFailures returns the failed (or unfinished) subtests of name that
// have no failed subtest of their own, or name itself when none has.
func leafFailures(name string, results map[string]*result) []string {
	var leaves []string
	for sub, r := range results {
		if !strings.HasPrefix(sub, name+"/") || (r.status != "fail" && r.status != "run") {
			continue
		}
		leaf := true
		for other, r2 := range results {
			if strings.HasPrefix(other, sub+"/") && (r2.status == "fail" || r2.status == "run") {
				leaf = false
				break
			}
		}
		if leaf {
			leaves = append(leaves, sub)
		}
	}
	if len(leaves) == 0 {
		return []string{name}
	}
	sort.Strings(leaves)
	return leaves
}

// load reads the Test functions of the suite's source in src and the go
// test -json output files of the runs, for pending and report.
func load(src string, files []string) ([]testFunc, *runs, error) {
	tests, err := sourceTests(src)
	if err != nil {
		return nil, nil, err
	}
	rs, err := collect(files)
	if err != nil {
		return nil, nil, err
	}
	return tests, rs, nil
}

// pending prints the -run pattern of the tests still to run (see the
// command's doc).
func pending(args []string) int {
	fs := flag.NewFlagSet("pending", flag.ExitOnError)
	src := fs.String("src", "", "pgx's pgxpool directory")
	fs.Parse(args)
	tests, rs, err := load(*src, fs.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		return 1
	}
	if rs.buildFailed || !rs.packageDone {
		return 0
	}
	var names []string
	for _, t := range tests {
		if r := rs.results[t.name]; !t.internal && (r == nil || r.status == "pause") {
			names = append(names, regexp.QuoteMeta(t.name))
		}
	}
	if len(names) > 0 {
		fmt.Printf("^(%s)$\n", strings.Join(names, "|"))
	}
	return 0
}
