package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Defaults of the timing flags, per case (bench) or configuration (sweep)
// and round. The full run of the embedded scenarios takes about a minute
// with them, --quick about half a minute: three rounds of a short window
// judge a difference better than one long one, since the machine's load
// changes between cases as much as within one.
const (
	defaultWarmup        = 250 * time.Millisecond
	quickWarmup          = 100 * time.Millisecond
	defaultBenchDuration = 500 * time.Millisecond
	quickBenchDuration   = 150 * time.Millisecond
	defaultBenchRounds   = 3
	maxRounds            = 100                     // bench and sweep
	defaultDuration      = 1250 * time.Millisecond // sweep
	quickDuration        = 400 * time.Millisecond  // sweep
	defaultDialTimeout   = 5 * time.Second
	maxWorkers           = 10_000
	maxDuration          = time.Hour
	defaultSweepQuery    = "SELECT 1"
	defaultSweepMaxConns = 32
	// sweepWorkersPerConn: by default the sweep runs twice as many workers
	// as its largest configuration has connections, so that callers wait
	// in every configuration, as they do in a service that needs a pool.
	sweepWorkersPerConn = 2
)

// options are the parsed flags of a command.
type options struct {
	command     string
	target      string
	onlyList    string // --only as given
	only        []string
	duration    time.Duration
	durationSet bool // --duration was given, not chosen by --quick or the default
	warmup      time.Duration
	workers     int
	quick       bool
	json        bool
	csv         bool
	chart       string
	dialTimeout time.Duration

	// sweep only
	query       string
	maxConns    int
	allowWrites bool
	rounds      int
}

// usageError is a mistake on the command line: exit status 2.
type usageError struct{ msg string }

// Error returns the message.
func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// command is one of shoal's subcommands, as the help lists it.
type command struct{ name, summary string }

// commands lists every subcommand: the help, the error for an unknown one
// and the package doc (a test holds it to this list) all name these.
var commands = []command{
	{"bench", "measure what pooling buys (embedded servers, or --target URL)"},
	{"sweep", "size a PostgreSQL pool: partitions x connections against --target postgres://..."},
	{"budget", "show a connection budget shared through etcd: shoal budget NAME --etcd ADDR"},
	{"version", "print the version and the commit shoal was built from"},
	{"help", "show this, or a command's flags and what its output means: shoal help bench"},
}

// commandNames lists the subcommands for an error message.
func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// topUsage is what `shoal help` prints.
func topUsage() string {
	var b strings.Builder
	b.WriteString("usage: shoal <command> [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	b.WriteString(`
"shoal help <command>" shows a command's flags. From a checkout of the
repository, run shoal as "go -C cmd/shoal run ." (go -C cmd/shoal run . help bench).
`)
	return b.String()
}

// versionUsage is what `shoal help version` prints.
const versionUsage = `usage: shoal version

Prints the version, the commit shoal was built from (or, for a binary
built without version control stamping, how to build one that says), the
Go version and the platform.
`

// run is the command without the process around it, so that tests can
// call it. It returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage())
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "help", "-h", "-help", "--help":
		if len(rest) > 1 {
			fmt.Fprintf(stderr, "shoal help: one command at a time, got %d; valid commands: %s\n", len(rest), commandNames())
			return exitUsage
		}
		if len(rest) == 0 {
			return printed(stdout, stderr, "help", "help", topUsage())
		}
		switch rest[0] {
		case "bench", "sweep":
			fs, _ := newFlagSet(rest[0])
			return printed(stdout, stderr, "help", "help", flagUsage(rest[0], fs))
		case "budget":
			return printed(stdout, stderr, "help", "help", budgetUsage)
		case "version":
			return printed(stdout, stderr, "help", "help", versionUsage)
		case "help":
			return printed(stdout, stderr, "help", "help", topUsage())
		default:
			fmt.Fprintf(stderr, "shoal help: unknown command %q; valid commands: %s\n", redactRaw(rest[0]), commandNames())
			return exitUsage
		}
	case "version", "-version", "--version":
		switch {
		case len(rest) == 0:
			return printed(stdout, stderr, "version", "version", version()+"\n")
		case len(rest) == 1 && slices.Contains([]string{"-h", "-help", "--help"}, rest[0]):
			return printed(stdout, stderr, "version", "help", versionUsage)
		default:
			// Refused rather than ignored: `shoal version --json` would
			// otherwise print the text with status 0, as if it were read.
			fmt.Fprintf(stderr, "shoal version: takes no arguments, got %q\n\n%s", redactRaw(rest[0]), versionUsage)
			return exitUsage
		}
	case "budget":
		return runBudget(ctx, rest, stdout, stderr)
	case "bench", "sweep":
	default:
		if strings.HasPrefix(cmd, "-") {
			fmt.Fprintf(stderr, "shoal: %q is a flag, not a command; %s; valid commands: %s\n", redactRaw(cmd), flagsAfter(cmd, rest), commandNames())
			return exitUsage
		}
		fmt.Fprintf(stderr, "shoal: unknown command %q; valid commands: %s\n", redactRaw(cmd), commandNames())
		return exitUsage
	}
	opts, err := parseFlags(cmd, rest)
	if errors.Is(err, flag.ErrHelp) {
		fs, _ := newFlagSet(cmd)
		return printed(stdout, stderr, cmd, "help", flagUsage(cmd, fs))
	}
	if err != nil {
		fs, _ := newFlagSet(cmd)
		fmt.Fprintf(stderr, "shoal %s: %s\n\n%s", cmd, redactRaw(err.Error()), flagUsage(cmd, fs))
		return exitUsage
	}
	if cmd == "sweep" {
		return runSweep(ctx, opts, stdout, stderr)
	}
	return runBench(ctx, opts, stdout, stderr)
}

// flagsAfter says where the flag given before the command goes: after the
// first command named among the rest of the arguments, if any.
func flagsAfter(given string, rest []string) string {
	for _, a := range rest {
		for _, c := range commands {
			if a == c.name {
				more := ""
				if len(rest) > 1 {
					more = " ..."
				}
				return fmt.Sprintf("flags go after the command: shoal %s %s%s", a, redactRaw(given), more)
			}
		}
	}
	return "flags go after the command"
}

// newFlagSet declares a command's flags, bound to a fresh options.
func newFlagSet(cmd string) (*flag.FlagSet, *options) {
	o := &options{command: cmd}
	fs := flag.NewFlagSet("shoal "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if cmd == "sweep" {
		fs.StringVar(&o.target, "target", "", "your PostgreSQL, a `URL` such as postgres://user:password@host:5432/db, or a key=value string such as 'host=db user=app dbname=app'")
	} else {
		fs.StringVar(&o.target, "target", "", "the server to measure instead of the embedded ones, a `URL`: "+schemes+"; or a PostgreSQL key=value string")
	}
	duration, quick, what := defaultBenchDuration, quickBenchDuration, "case"
	if cmd == "sweep" {
		duration, quick, what = defaultDuration, quickDuration, "configuration"
	}
	fs.DurationVar(&o.duration, "duration", duration, "measured time per "+what+" in each round")
	fs.DurationVar(&o.warmup, "warmup", defaultWarmup, "unmeasured time per "+what+" before it, and one operation per worker at least")
	quickUsage := fmt.Sprintf("the short run: --duration %s --warmup %s", quick, quickWarmup)
	if cmd == "sweep" {
		quickUsage += fmt.Sprintf(" --rounds %d, and only half and all of --max-conns", quickSweepRounds)
	}
	fs.BoolVar(&o.quick, "quick", false, quickUsage)
	fs.BoolVar(&o.json, "json", false, "print JSON on stdout instead of the tables")
	fs.BoolVar(&o.csv, "csv", false, "print CSV on stdout instead of the tables")
	fs.StringVar(&o.chart, "chart", "", "also draw a chart into `FILE`, whose name must end in .svg or .png")
	fs.DurationVar(&o.dialTimeout, "dial-timeout", defaultDialTimeout, "how long to try to reach the target or open a connection")
	if cmd == "sweep" {
		fs.IntVar(&o.workers, "workers", 0, fmt.Sprintf("concurrent workers (default: %d times --max-conns)", sweepWorkersPerConn))
		fs.IntVar(&o.rounds, "rounds", 0, fmt.Sprintf("times every configuration runs, alternating (default %d; --quick %d)", defaultSweepRounds, quickSweepRounds))
		fs.StringVar(&o.query, "query", defaultSweepQuery, "the SQL each operation runs")
		fs.IntVar(&o.maxConns, "max-conns", defaultSweepMaxConns, "the most connections the sweep tries, in all")
		fs.BoolVar(&o.allowWrites, "allow-writes", false, "run a --query that writes (the sweep runs it thousands of times)")
	} else {
		fs.IntVar(&o.workers, "workers", 0, "concurrent workers (default: each scenario's own)")
		fs.StringVar(&o.onlyList, "only", "", "scenarios to run, comma-separated: "+strings.Join(scenarioNames(), ", "))
		fs.IntVar(&o.rounds, "rounds", defaultBenchRounds, "times every case runs, the order alternating, to judge each difference round by round; 1 judges it within one window")
	}
	return fs, o
}

// flagUsage lists a command's flags with their defaults, in the --form.
func flagUsage(cmd string, fs *flag.FlagSet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: shoal %s [flags]\n\nflags:\n", cmd)
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		arg := "--" + f.Name
		if name != "" {
			arg += " " + name
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(&b, "  %-26s %s%s\n", arg, usage, def)
	})
	if cmd == "bench" {
		fmt.Fprintf(&b, "\nscenarios:\n")
		for _, s := range allScenarios {
			fmt.Fprintf(&b, "  %-11s %s\n", s.name, s.description)
		}
		b.WriteString(benchOutputHelp)
	}
	if cmd == "sweep" {
		b.WriteString(sweepOutputHelp)
	}
	return b.String()
}

// validFlags lists a command's flags for an error message.
func validFlags(fs *flag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	return strings.Join(names, ", ")
}

// parseFlags parses and checks a command's flags.
func parseFlags(cmd string, args []string) (*options, error) {
	fs, o := newFlagSet(cmd)
	if err := fs.Parse(args); err != nil {
		return nil, flagError(fs, err)
	}
	if fs.NArg() > 0 {
		// Masked before it is quoted, so that the quote closing a password
		// (a key=value target the shell split) is not masked with it.
		return nil, usagef("unexpected argument %q (flags go after the command; valid flags: %s)", redactRaw(fs.Arg(0)), validFlags(fs))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	o.durationSet = set["duration"]
	if o.quick {
		if !set["duration"] && cmd == "sweep" {
			o.duration = quickDuration
		} else if !set["duration"] {
			o.duration = quickBenchDuration
		}
		if !set["warmup"] {
			o.warmup = quickWarmup
		}
	}
	switch {
	case o.duration <= 0 || o.duration > maxDuration:
		return nil, usagef("--duration %s: want more than 0 and at most %s", o.duration, maxDuration)
	case o.warmup < 0 || o.warmup > maxDuration:
		return nil, usagef("--warmup %s: want 0 or more, at most %s", o.warmup, maxDuration)
	case o.workers < 0 || o.workers > maxWorkers:
		return nil, usagef("--workers %d: want 1 to %d", o.workers, maxWorkers)
	case o.dialTimeout <= 0 || o.dialTimeout > maxDuration:
		// Bounded as --duration is: the set-up timeout is four times it,
		// and past that product's range it would wrap to the 20s floor.
		return nil, usagef("--dial-timeout %s: want more than 0 and at most %s", o.dialTimeout, maxDuration)
	case o.json && o.csv:
		return nil, usagef("--json and --csv both write to stdout; choose one")
	case set["target"] && strings.TrimSpace(o.target) == "":
		// --target "$UNSET" would otherwise measure the embedded servers
		// and look like a measurement of the user's own.
		return nil, usagef("--target is empty; leave it out to use the embedded servers")
	}
	if o.chart != "" {
		if ext := strings.ToLower(filepath.Ext(o.chart)); ext != ".svg" && ext != ".png" {
			return nil, usagef("--chart %q: the file name must end in .svg or .png", o.chart)
		}
		// Named in full from here on: under "go -C cmd/shoal run ." a
		// relative path is relative to cmd/shoal, not to where the user is.
		given := o.chart
		if abs, err := filepath.Abs(o.chart); err == nil {
			o.chart = abs
		}
		// Find out now, not after a minute of measuring, that the chart
		// cannot be written there.
		if st, err := os.Stat(filepath.Dir(o.chart)); err != nil || !st.IsDir() {
			return nil, usagef("--chart %q: directory %q does not exist", given, filepath.Dir(o.chart))
		}
		if st, err := os.Stat(o.chart); err == nil && st.IsDir() {
			return nil, usagef("--chart %q: %q is a directory; name a file in it, such as %q", given, o.chart, filepath.Join(o.chart, "shoal"+filepath.Ext(o.chart)))
		}
	}
	if cmd == "bench" && (o.rounds < 1 || o.rounds > maxRounds) {
		return nil, usagef("--rounds %d: want 1 to %d", o.rounds, maxRounds)
	}
	if cmd == "sweep" {
		if o.target == "" {
			return nil, usagef("--target is required: a postgres:// URL or a PostgreSQL key=value string")
		}
		if o.maxConns < 1 || o.maxConns > 1024 {
			return nil, usagef("--max-conns %d: want %d to 1024", o.maxConns, minSweepConns)
		}
		if o.maxConns == 1 {
			// Its one configuration, 1x1, is the default's stand-in.
			return nil, usagef("--max-conns 1: one connection makes one configuration, measured as the default, with nothing to compare it to; want %d to 1024", minSweepConns)
		}
		if o.workers == 0 {
			o.workers = min(sweepWorkersPerConn*o.maxConns, maxWorkers)
		}
		switch {
		case o.rounds == 0 && o.quick:
			o.rounds = quickSweepRounds
		case o.rounds == 0:
			o.rounds = defaultSweepRounds
		case o.rounds < 2 || o.rounds > maxRounds:
			return nil, usagef("--rounds %d: want 2 to %d (one round gives no spread to judge by)", o.rounds, maxRounds)
		}
		if strings.TrimSpace(o.query) == "" {
			return nil, usagef("--query: empty")
		}
	}
	if set["only"] {
		// Refused when empty, as --target is: --only "$UNSET" would
		// otherwise run every scenario.
		valid := scenarioNames()
		for _, name := range strings.Split(o.onlyList, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if !slices.Contains(valid, name) {
				return nil, usagef("--only: unknown scenario %q; valid scenarios: %s", name, strings.Join(valid, ", "))
			}
			if !slices.Contains(o.only, name) {
				o.only = append(o.only, name)
			}
		}
		if len(o.only) == 0 {
			return nil, usagef("--only names no scenario; leave it out to run every one, or name some of: %s", strings.Join(valid, ", "))
		}
	}
	return o, nil
}

// sweepOutputHelp closes `shoal help sweep`: what the output holds.
const sweepOutputHelp = `
output:
  A table of the configurations, fastest first, as bench prints one, the default marked
  "(default)"; then, for each configuration, its ops/s in each round, their mean with a 95%
  interval, and its ratio to the default's throughput, compared round by round, with whether
  that is significant (faster, slower, not sig.). It ends with the recommendation: the
  smallest configuration significantly faster than the default and not significantly slower
  than the fastest, with the connection string and the Go settings to paste; or "keep the
  default" when none is.
`

// benchOutputHelp closes `shoal help bench`: what the output holds.
const benchOutputHelp = `
output:
  Each group of cases prints a table, fastest first: ops/s (all its workers together, in
  the measured window after the warm-up), how much ops/s varied, and the mean, p50 and p99
  time per operation; then each case against the fastest (how many times slower by ops/s,
  and how much longer per operation that means), with whether the difference is beyond the
  noise; then the connections each case opened and how long operations waited for one. A
  legend under each table says what its columns count. The run ends with a verdict: which
  case won each group, by how much, and what to try next.
`
