//go:build ignore

// Command suite is the helper of scripts/pgxpool-suite.sh. The script copies
// it into the temporary module where it runs pgx's pgxpool tests against
// shoalpgx, builds it there and calls it twice:
//
//	suite check
//	    exits 0 when the server in PGX_TEST_DATABASE answers, 1 (with the
//	    error) when it does not
//	suite pending -src DIR JSON...
//	    prints a go test -run pattern for the tests that the runs whose
//	    go test -json output is in the JSON files never started, or never
//	    resumed after t.Parallel paused them, because the test binary
//	    died first (a timeout, a crash); nothing when there are none. A
//	    test that was running when the binary died is not in it: it hung
//	    or crashed, and counts as failed
//	suite report -src DIR -pkgdir DIR -moddir DIR -stderr FILE -expected FILE -pgx VERSION -elapsed SECONDS JSON...
//	    reads the go test -json output of those runs and prints the
//	    counts, each failed and skipped test and, when the tests do not
//	    compile, the errors and which tests reach them; exits 1 when a
//	    test fails that the expected-failures file does not list, a listed
//	    test passes, the tests do not compile, or the file names a test
//	    that does not exist
//
// It uses pgx only for check; report needs the standard library alone.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: suite check | suite report [flags]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "check":
		os.Exit(check())
	case "pending":
		os.Exit(pending(os.Args[2:]))
	case "report":
		os.Exit(report(os.Args[2:]))
	}
	fmt.Fprintf(os.Stderr, "suite: unknown command %q\n", os.Args[1])
	os.Exit(2)
}

// check connects once to PGX_TEST_DATABASE, as the tests will.
func check() int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, os.Getenv("PGX_TEST_DATABASE"))
	if err == nil {
		err = conn.Ping(ctx)
		conn.Close(ctx)
	}
	if err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

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

// pending prints the -run pattern of the tests still to run (see the
// command's doc).
func pending(args []string) int {
	fs := flag.NewFlagSet("pending", flag.ExitOnError)
	src := fs.String("src", "", "pgx's pgxpool directory")
	fs.Parse(args)
	tests, err := sourceTests(*src)
	if err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		return 1
	}
	rs, err := collect(fs.Args())
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

// testFunc is one Test function of the suite's source.
type testFunc struct {
	name     string
	file     string
	internal bool // in package pgxpool, not pgxpool_test: it reaches unexported names
}

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

	tests, err := sourceTests(*src)
	if err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		return 1
	}
	expected, order, err := readExpected(*expectedFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		return 1
	}
	rs, err := collect(fs.Args())
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

// sourceTests lists the Test functions of pgx's pgxpool tests, in file and
// source order, marking those of package pgxpool as internal.
func sourceTests(dir string) ([]testFunc, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no test files in %s", dir)
	}
	sort.Strings(files)
	var tests []testFunc
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		internal := !strings.HasSuffix(f.Name.Name, "_test")
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && isTest(fd) {
				tests = append(tests, testFunc{name: fd.Name.Name, file: filepath.Base(path), internal: internal})
			}
		}
	}
	return tests, nil
}

// isTest reports whether fd is a test go test runs: func TestXxx(*testing.T).
func isTest(fd *ast.FuncDecl) bool {
	name := fd.Name.Name
	if fd.Recv != nil || !strings.HasPrefix(name, "Test") || name == "TestMain" {
		return false
	}
	if rest := name[len("Test"):]; rest != "" && rest[0] >= 'a' && rest[0] <= 'z' {
		return false
	}
	params := fd.Type.Params.List
	if len(params) != 1 || len(params[0].Names) > 1 {
		return false
	}
	star, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "testing" && sel.Sel.Name == "T"
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

var (
	errLine     = regexp.MustCompile(`^(.+?\.go):(\d+):\d+: (.*)$`)
	undefinedRe = regexp.MustCompile(`undefined: shoalpgx\.(\w+)`)
	noMemberRe  = regexp.MustCompile(`type \*?(?:shoalpgx\.)?(\w+) has no field or method (\w+)`)
)

// compileError is one compiler error in a test file.
type compileError struct {
	file string
	line int
	name string // the shoalpgx name it says is missing, or the message
}

// printMissing maps each compiler error to the declaration it is in and
// prints, for each test, the missing names its own code or the helpers and
// types it uses run into.
func printMissing(pkgDir, modDir string, tests []testFunc, buildOutput []string) {
	var errs []compileError
	for _, o := range buildOutput {
		m := errLine.FindStringSubmatch(strings.TrimSpace(o))
		if m == nil {
			continue
		}
		path := m[1]
		if !filepath.IsAbs(path) {
			path = filepath.Join(modDir, path)
		}
		line, _ := strconv.Atoi(m[2])
		name := m[3]
		if u := undefinedRe.FindStringSubmatch(name); u != nil {
			name = u[1]
		} else if u := noMemberRe.FindStringSubmatch(name); u != nil {
			name = u[1] + "." + u[2]
		}
		errs = append(errs, compileError{file: filepath.Clean(path), line: line, name: name})
	}
	if len(errs) == 0 {
		return
	}
	g, err := declGraph(pkgDir)
	if err != nil {
		fmt.Println("  (could not map the errors to tests:", err, ")")
		return
	}
	perDecl := map[string][]string{}
	var names []string
	outside := false
	for _, e := range errs {
		d := g.at(e.file, e.line)
		if d == "" {
			outside = true
			continue
		}
		if !slices.Contains(perDecl[d], e.name) {
			perDecl[d] = append(perDecl[d], e.name)
		}
		if !slices.Contains(names, e.name) {
			names = append(names, e.name)
		}
	}
	sort.Strings(names)
	fmt.Println()
	fmt.Println("what the tests use that shoalpgx does not have: " + strings.Join(names, ", "))
	fmt.Println("tests that reach it (in their own code or the helpers and types they use):")
	reached := 0
	for _, t := range tests {
		var got []string
		for _, d := range g.reach(t.name) {
			for _, n := range perDecl[d] {
				if !slices.Contains(got, n) {
					got = append(got, n)
				}
			}
		}
		if len(got) > 0 {
			reached++
			sort.Strings(got)
			fmt.Printf("  %s: %s\n", t.name, strings.Join(got, ", "))
		}
	}
	fmt.Printf("%d of %d tests reach a missing name; the other %d use none\n", reached, len(tests), len(tests)-reached)
	if outside {
		fmt.Println("some errors are outside the test files (in shoalpgx or the module setup): see the errors above")
	}
}

// graph is the package's top-level declarations: where each is and which
// others it names.
type graph struct {
	spans map[string][]span // file -> declarations in it
	uses  map[string][]string
}

type span struct {
	name       string
	start, end int // lines
}

// declGraph parses the rewritten test files. A method is a declaration of
// its own ("T.M") that its type T uses, so a test that uses a type reaches
// the type's methods too.
func declGraph(dir string) (*graph, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	g := &graph{spans: map[string][]span{}, uses: map[string][]string{}}
	top := map[string]bool{}
	type node struct {
		name string
		n    ast.Node
	}
	var nodes []node
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		path = filepath.Clean(path)
		add := func(name string, n ast.Node) {
			nodes = append(nodes, node{name, n})
			g.spans[path] = append(g.spans[path], span{name, fset.Position(n.Pos()).Line, fset.Position(n.End()).Line})
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && len(d.Recv.List) == 1 {
					recv := recvName(d.Recv.List[0].Type)
					name := recv + "." + d.Name.Name
					g.uses[recv] = append(g.uses[recv], name)
					add(name, d)
					continue
				}
				top[d.Name.Name] = true
				add(d.Name.Name, d)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						top[s.Name.Name] = true
						add(s.Name.Name, s)
					case *ast.ValueSpec:
						for _, id := range s.Names {
							top[id.Name] = true
							add(id.Name, s)
						}
					}
				}
			}
		}
	}
	for _, nd := range nodes {
		ast.Inspect(nd.n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				ast.Inspect(n.X, func(n ast.Node) bool {
					if id, ok := n.(*ast.Ident); ok && top[id.Name] && id.Name != nd.name {
						g.uses[nd.name] = append(g.uses[nd.name], id.Name)
					}
					return true
				})
				return false
			case *ast.Ident:
				if top[n.Name] && n.Name != nd.name {
					g.uses[nd.name] = append(g.uses[nd.name], n.Name)
				}
			}
			return true
		})
	}
	return g, nil
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// at names the declaration that holds line of file, or "".
func (g *graph) at(file string, line int) string {
	for _, s := range g.spans[file] {
		if line >= s.start && line <= s.end {
			return s.name
		}
	}
	return ""
}

// reach lists the declarations name uses, directly or not, and name.
func (g *graph) reach(name string) []string {
	seen := map[string]bool{name: true}
	stack := []string{name}
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, u := range g.uses[d] {
			if !seen[u] {
				seen[u] = true
				stack = append(stack, u)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}
