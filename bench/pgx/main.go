package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/bench/internal/cpuprofile"
	"github.com/shoalpool/shoal/bench/internal/median"
	"github.com/shoalpool/shoal/bench/internal/outfile"
)

func main() {
	var (
		dsn      = flag.String("dsn", os.Getenv("SHOAL_TEST_POSTGRES"), "PostgreSQL connection string (default $SHOAL_TEST_POSTGRES)")
		conns    = flag.Int("conns", 8, "connections per contender")
		set      = flag.String("set", "default", "what to compare: default (the pools on -conns connections each) or pipeline (pipelining on 8 connections beside pools of 8 and 32 and PgBouncer)")
		workers  = flag.String("workers", "", "worker counts, comma-separated (default 8,32,128; the pipeline set: "+pipelineWorkers+")")
		depth    = flag.Int("pipeline", pipelineDepth, "the pipeline set: pool_pipeline of the pipelined contender")
		bouncer  = flag.String("pgbouncer", os.Getenv("SHOAL_TEST_PGBOUNCER"), "the pipeline set: PgBouncer's connection string (default $SHOAL_TEST_PGBOUNCER)")
		rounds   = flag.Int("rounds", 5, "interleaved rounds per cell; the best is kept")
		duration = flag.Duration("duration", 2*time.Second, "length of one round")
		cprTime  = flag.Duration("cpr", 2*time.Second, "length of the connect-per-request run (0 skips it)")
		only     = flag.String("only", "", "run only these contenders, comma-separated (for profiling)")
		onlyQ    = flag.String("queries", "", "run only these queries, by name, comma-separated (for profiling)")
		cpuProf  = flag.String("cpuprofile", "", "write a CPU profile of the measured rounds here")
		traceOut = flag.String("trace", "", "write a runtime trace of the rounds here, to see how often a query's goroutine blocks (keep it short: one contender, one count, -rounds 1)")
		out      = flag.String("out", "", "write the markdown fragment here")
		pinLone  = flag.Bool("pin-lone", false, "for the 1-worker cells, pin this process and the server's processes (and PgBouncer's) to CPU 0 with taskset, so that each contender's lone caller shares its backend's CPU: only for a server of your own on this machine")
	)
	flag.Parse()
	if *dsn == "" {
		log.Fatal("no connection string: set SHOAL_TEST_POSTGRES or -dsn")
	}
	all, queries, defaultWorkers := contenders, defaultQueries, "8,32,128"
	switch *set {
	case "default":
	case "pipeline":
		all, queries, defaultWorkers = pipelineContenders, pipelineQueries, pipelineWorkers
		pipelineDepth, pgbouncerDSN = *depth, *bouncer
	default:
		log.Fatalf("-set %q: want default or pipeline", *set)
	}
	if *workers == "" {
		*workers = defaultWorkers
	}
	counts, err := parseCounts(*workers)
	if err != nil {
		log.Fatal(err)
	}
	if *onlyQ != "" {
		queries, err = pickQueries(queries, strings.Split(*onlyQ, ","))
		if err != nil {
			log.Fatal(err)
		}
	}
	ctx := context.Background()
	serverVersion, err := prepare(ctx, *dsn)
	if err != nil {
		log.Fatal(err)
	}

	var open []contender
	var running []opened
	for _, c := range all {
		if *only != "" && !contains(strings.Split(*only, ","), c.name) {
			continue
		}
		if c.conns == 0 {
			c.conns = *conns
		}
		o, err := c.open(ctx, *dsn, c.conns)
		if err != nil {
			log.Fatalf("open %s: %v", c.name, err)
		}
		open = append(open, c)
		running = append(running, o)
	}
	defer func() {
		for _, o := range running {
			o.close()
		}
	}()

	if *cpuProf != "" {
		stop, err := cpuprofile.Start(*cpuProf)
		if err != nil {
			log.Fatal(err)
		}
		defer stop()
	}
	if *traceOut != "" {
		f, err := os.Create(*traceOut)
		if err != nil {
			log.Fatal(err)
		}
		if err := trace.Start(f); err != nil {
			log.Fatal(err)
		}
		defer trace.Stop()
	}

	res := results{conns: *conns, contenders: open, pinnedLone: *pinLone && slices.Contains(counts, 1)}
	pin := pinner{dsn: *dsn}
	for _, q := range queries {
		// One unmeasured round each, so every connection has prepared the
		// statement and the first measured round is not the cold one.
		for i, c := range open {
			if _, err := runFor(ctx, c.conns, 200*time.Millisecond, running[i].worker(q), running[i].statementsPerCall()); err != nil {
				log.Fatalf("warm %s %s: %v", c.name, q.name, err)
			}
		}
		for _, n := range counts {
			pinned := *pinLone && n == 1
			if pinned {
				if err := pin.pin(ctx); err != nil {
					log.Fatalf("-pin-lone: %v", err)
				}
			}
			fatalf := func(format string, args ...any) {
				if pinned {
					_ = pin.unpin(ctx)
				}
				log.Fatalf(format, args...)
			}
			best := make([]float64, len(open))
			cpu := make([]time.Duration, len(open))
			user := make([]time.Duration, len(open)) // of the round with the lowest cpu
			cs := make([]float64, len(open))
			ratios := make([][]float64, len(open)) // per round, of that round's first contender
			p50s := make([][]float64, len(open))   // per round, nanoseconds
			p99s := make([][]float64, len(open))
			idles := make([][]float64, len(open))
			perRound := make([][]float64, len(open)) // per contender, each round's q/s
			for r := range *rounds {
				var roundFirst float64
				for _, i := range roundOrder(len(open), r) {
					c := open[i]
					goroutines := n
					if c.fixedWorkers {
						goroutines = c.conns
					}
					m, err := runFor(ctx, goroutines, *duration, running[i].worker(q), running[i].statementsPerCall())
					if err != nil {
						fatalf("%s %s %d workers: %v", c.name, q.name, n, err)
					}
					best[i] = max(best[i], m.qps)
					perRound[i] = append(perRound[i], m.qps)
					p50s[i] = append(p50s[i], float64(m.p50))
					p99s[i] = append(p99s[i], float64(m.p99))
					if m.idle >= 0 {
						idles[i] = append(idles[i], m.idle)
					}
					if i == 0 {
						roundFirst = m.qps
					} else if roundFirst > 0 {
						ratios[i] = append(ratios[i], m.qps/roundFirst)
					}
					if cpu[i] == 0 || m.cpuQuery < cpu[i] {
						cpu[i], user[i] = m.cpuQuery, m.userQuery
					}
					if cs[i] == 0 || m.csQuery < cs[i] {
						cs[i] = m.csQuery
					}
					fmt.Fprintln(os.Stderr, roundLine(q.name, c.name, n, r+1, m))
				}
			}
			if pinned {
				if err := pin.unpin(ctx); err != nil {
					log.Fatalf("-pin-lone: %v", err)
				}
			}
			res.rows = append(res.rows, row{query: q.name, workers: n, qps: best, cpu: cpu, user: user, cs: cs,
				medianRatio: medians(ratios), p50: medians(p50s), p99: medians(p99s), idle: medians(idles), perRound: perRound})
		}
		if *cprTime > 0 && *only == "" && *set == "default" {
			m, err := runFor(ctx, *conns, *cprTime, connectPerRequest(*dsn, q), 1)
			if err != nil {
				log.Fatalf("connect-per-request %s: %v", q.name, err)
			}
			res.cpr = append(res.cpr, cprRow{query: q.name, qps: m.qps})
		}
	}

	args := make([]string, len(os.Args)-1)
	for i, a := range os.Args[1:] {
		args[i] = a
		if strings.ContainsAny(a, " \t'\"&") {
			args[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	cmd := "go run ./pgx " + strings.Join(args, " ")
	machine := fmt.Sprintf("%s/%s, %d CPUs (GOMAXPROCS %d), %s, %s on loopback",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), serverVersion)
	md := res.markdown(cmd, machine, *rounds, *duration)
	if *set == "pipeline" {
		md = res.pipelineMarkdown(cmd, machine, *rounds, *duration)
	}
	fmt.Print(md)
	if *out != "" {
		if err := outfile.Write(*out, []byte(md)); err != nil {
			log.Fatal(err)
		}
	}
}

// prepare creates the small-row table and returns the server's version.
func prepare(ctx context.Context, dsn string) (string, error) {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, setupSQL); err != nil {
		return "", err
	}
	var v string
	if err := c.QueryRow(ctx, "select 'PostgreSQL ' || current_setting('server_version')").Scan(&v); err != nil {
		return "", err
	}
	return v, nil
}

// roundOrder is the order in which round r runs n contenders: the first
// (dedicated, which the others are paired with) always first, then the
// rest, turned by one place every second round and run backwards in odd
// rounds. In a fixed order one contender has the same place in every
// round, so whatever that place costs (the previous run's garbage, the
// server's state after it: a checkpoint, the WAL an insert run left)
// lands on it alone; turning alone leaves most pairs in one order over
// three rounds. A round and its mirror run every pair in both orders and
// give every contender the middle place on average, so an even number of
// rounds cancels a cost that grows with the place.
func roundOrder(n, r int) []int {
	order := make([]int, 0, n)
	if n == 0 {
		return order
	}
	order = append(order, 0)
	for k := range n - 1 {
		order = append(order, 1+(k+r/2)%(n-1))
	}
	if r%2 == 1 {
		slices.Reverse(order[1:])
	}
	return order
}

// medians returns the median of each list (0 for an empty one).
func medians(lists [][]float64) []float64 {
	out := make([]float64, len(lists))
	for i, l := range lists {
		out[i] = median.Of(l)
	}
	return out
}

func parseCounts(s string) ([]int, error) {
	var counts []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad worker count %q", f)
		}
		counts = append(counts, n)
	}
	return counts, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.TrimSpace(x) == s {
			return true
		}
	}
	return false
}
