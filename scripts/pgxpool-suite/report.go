//go:build ignore

package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
)

func report(args []string) int {
	fs := flag.NewFlagSet("report", flag.ExitOnError)
	src := fs.String("src", "", "pgx's pgxpool directory (the tests as pgx ships them)")
	pkgDir := fs.String("pkgdir", "", "the rewritten tests' directory in the temporary module")
	modDir := fs.String("moddir", "", "the temporary module's root, where go test ran")
	stderrFile := fs.String("stderr", "", "go test's standard error")
	expectedFile := fs.String("expected", "", "the expected-failures file")
	version := fs.String("pgx", "", "pgx's version, for the heading")
	elapsed := fs.Int("elapsed", -1, "seconds the script has taken so far")
	fs.Parse(args)

	expected, order, err := readExpected(*expectedFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		return 1
	}
	tests, rs, err := load(*src, fs.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		return 1
	}
	results, buildFailed, packageOutput, allOutput := rs.results, rs.buildFailed, rs.packageOutput, rs.allOutput

	var external, internal []testFunc
	known := map[string]bool{}
	for _, t := range tests {
		known[t.name] = true
		if t.internal {
			internal = append(internal, t)
		} else {
			external = append(external, t)
		}
	}

	fmt.Printf("pgx %s pgxpool tests against shoalpgx: %d tests\n", *version, len(tests))
	if !rs.packageDone {
		// The go command failed before it could build or run the package
		// (a module it could not fetch, say): nothing ran.
		buildFailed = true
		fmt.Println("go test did not get to run the package; its output:")
		printIndented(rs.other, "  ")
		if *stderrFile != "" {
			if b, err := os.ReadFile(*stderrFile); err == nil {
				printIndented(strings.SplitAfter(string(b), "\n"), "  ")
			}
		}
	}

	var passed, failed, skipped, unexpected []string
	didNotCompile := 0
	failedLeaves := map[string][]string{}
	if buildFailed {
		didNotCompile = len(external)
	} else {
		for _, t := range external {
			r := results[t.name]
			switch {
			case r == nil || r.status == "run" || r.status == "pause":
				failed = append(failed, t.name)
			case r.status == "pass":
				passed = append(passed, t.name)
			case r.status == "skip":
				skipped = append(skipped, t.name)
			default:
				failed = append(failed, t.name)
			}
		}
		for _, name := range failed {
			leaves := leafFailures(name, results)
			failedLeaves[name] = leaves
			for _, l := range leaves {
				if !covered(l, expected) {
					unexpected = append(unexpected, name)
					break
				}
			}
		}
	}

	fmt.Printf("  passed %d, failed %d (%d not in the expected-failures list), skipped %d, did not compile %d, not applicable (internal) %d\n",
		len(passed), len(failed), len(unexpected), len(skipped), didNotCompile, len(internal))

	bad := false
	if buildFailed && rs.packageDone {
		bad = true
		fmt.Println()
		fmt.Println("the tests do not compile against shoalpgx:")
		printIndented(rs.buildOutput, "  ")
		printMissing(*pkgDir, *modDir, external, rs.buildOutput)
	}
	if len(failed) > 0 {
		fmt.Println()
		fmt.Println("failed:")
		for _, name := range failed {
			r := results[name]
			how := ""
			switch {
			case r == nil:
				how = " (did not run: the test binary exited before it started)"
			case r.status == "run":
				how = " (did not finish: it hung or crashed, and the test binary died)"
			case r.status == "pause":
				how = " (did not run: waiting for its parallel turn when the test binary died)"
			}
			if slices.Contains(unexpected, name) {
				fmt.Printf("  %s: UNEXPECTED%s\n", name, how)
			} else {
				fmt.Printf("  %s: expected%s: %s\n", name, how, reasons(failedLeaves[name], expected))
			}
			for _, l := range failedLeaves[name] {
				if l != name {
					fmt.Printf("    %s failed\n", l)
				}
			}
			if r != nil && slices.Contains(unexpected, name) {
				printFailure(name, results)
			}
		}
	}
	// A timeout or a panic that ended a test binary: say so, with the tests
	// it names as running, but not the goroutine dump. (The panic's lines
	// may be attributed to whichever test printed last.)
	for i := 0; i < len(allOutput) && !buildFailed; i++ {
		if !strings.HasPrefix(allOutput[i], "panic: ") {
			continue
		}
		fmt.Println()
		fmt.Println("a test binary did not exit normally:")
		var head []string
		for ; i < len(allOutput) && !strings.HasPrefix(allOutput[i], "goroutine "); i++ {
			head = append(head, allOutput[i])
		}
		printIndented(head, "  ")
	}
	if len(skipped) > 0 {
		fmt.Println()
		fmt.Println("skipped:")
		for _, name := range skipped {
			fmt.Printf("  %s: %s\n", name, skipMessage(results[name]))
		}
	}
	if len(internal) > 0 {
		fmt.Println()
		fmt.Println("not applicable (internal: in package pgxpool, they reach its unexported names):")
		for _, t := range internal {
			fmt.Printf("  %s (%s)\n", t.name, t.file)
		}
	}
	if rs.packageFailed && !buildFailed && len(failed) == 0 {
		bad = true
		fmt.Println()
		fmt.Println("the package failed with no test failing; its output:")
		printIndented(packageOutput, "  ")
	}

	// The expected-failures list must stay honest: every name in it is a
	// test of the suite, and none of them passes.
	var listProblems []string
	for _, name := range order {
		top, _, _ := strings.Cut(name, "/")
		if !known[top] {
			listProblems = append(listProblems, fmt.Sprintf("%s is listed but pgx %s's pgxpool has no such test", name, *version))
			continue
		}
		if buildFailed {
			continue
		}
		r := entryResult(name, results)
		switch {
		case r == nil:
			listProblems = append(listProblems, fmt.Sprintf("%s is listed but did not run", name))
		case r.status == "pass":
			listProblems = append(listProblems, fmt.Sprintf("%s is listed as expected to fail but PASSED: take it off the list (and out of docs/from-pgxpool.md)", name))
		case r.status == "skip":
			fmt.Printf("note: %s is listed but was skipped, so the list is not checked for it\n", name)
		}
	}
	if len(listProblems) > 0 {
		bad = true
		fmt.Println()
		fmt.Println("expected-failures list (" + *expectedFile + "):")
		for _, p := range listProblems {
			fmt.Println("  " + p)
		}
	}
	if len(unexpected) > 0 {
		bad = true
		fmt.Println()
		fmt.Printf("%d failed tests are not in the expected-failures list: fix shoalpgx, or list each deliberate difference with its reason\n", len(unexpected))
	}

	fmt.Println()
	if *elapsed >= 0 {
		fmt.Printf("the pgxpool suite took %ds\n", *elapsed)
	}
	fmt.Printf("pgxpool: %d passed, %d failed, %d skipped\n", len(passed), len(failed), len(skipped))
	if bad {
		return 1
	}
	return 0
}

// readExpected reads the expected-failures file: one test a line (a
// top-level test or a subtest, as go test names it), a reason after it,
// # for comments.
func readExpected(path string) (map[string]string, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	reasons := map[string]string{}
	var order []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason := line, ""
		if i := strings.IndexAny(line, " \t"); i >= 0 {
			name, reason = line[:i], strings.TrimSpace(line[i:])
		}
		if reason == "" {
			return nil, nil, fmt.Errorf("%s:%d: %s has no reason: give one after the name", path, n, name)
		}
		if _, dup := reasons[name]; dup {
			return nil, nil, fmt.Errorf("%s:%d: %s is listed twice", path, n, name)
		}
		reasons[name] = reason
		order = append(order, name)
	}
	return reasons, order, sc.Err()
}

// covered reports whether the list names test or one of its parents.
func covered(test string, expected map[string]string) bool {
	for name := range expected {
		if test == name || strings.HasPrefix(test, name+"/") {
			return true
		}
	}
	return false
}

// reasons gives the listed reasons that cover the failed leaves.
func reasons(leaves []string, expected map[string]string) string {
	var out []string
	for _, l := range leaves {
		for name, why := range expected {
			if (l == name || strings.HasPrefix(l, name+"/")) && !slices.Contains(out, why) {
				out = append(out, why)
			}
		}
	}
	return strings.Join(out, "; ")
}

// printFailure prints what a failed test and its failed subtests printed,
// without the === RUN/PAUSE/CONT lines, at most 40 lines of each.
func printFailure(name string, results map[string]*result) {
	names := []string{name}
	for sub := range results {
		if strings.HasPrefix(sub, name+"/") && results[sub].status == "fail" {
			names = append(names, sub)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		var lines []string
		for _, o := range results[n].output {
			t := strings.TrimRight(o, "\n")
			if strings.TrimSpace(t) == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(strings.TrimSpace(t), "--- ") {
				continue
			}
			lines = append(lines, t)
		}
		if len(lines) > 40 {
			lines = append(lines[:40], fmt.Sprintf("... (%d more lines)", len(lines)-40))
		}
		for _, l := range lines {
			fmt.Println("      " + l)
		}
	}
}

// skipMessage is what the test said when it skipped.
func skipMessage(r *result) string {
	var msg []string
	for _, o := range r.output {
		t := strings.TrimSpace(o)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		msg = append(msg, t)
	}
	if len(msg) == 0 {
		return "(no message)"
	}
	return strings.Join(msg, " ")
}

func printIndented(lines []string, indent string) {
	for _, l := range lines {
		l = strings.TrimRight(l, "\n")
		if l != "" {
			fmt.Println(indent + l)
		}
	}
}
