package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/bench/internal/cpuprofile"
	"github.com/shoalpool/shoal/bench/internal/outfile"
	"github.com/shoalpool/shoal/internal/pgcount"
)

// workload is what every worker runs.
type workload struct {
	workers  int
	conns    int
	every    int           // every this many statements, one gives up
	sleep    time.Duration // how long that one runs on the server
	deadline time.Duration // and when its caller gives up
	duration time.Duration
}

// tally is one contender's round.
type tally struct {
	served, abandoned, canceled, failed atomic.Int64
	// past is the time the cancelled statements' callers waited past
	// their deadlines, in all, and longest the longest (nanoseconds).
	past, longest atomic.Int64
	newConns      int64
	maxAtServer   int
	firstErr      atomic.Pointer[error]
}

func main() {
	var (
		dsn      = flag.String("dsn", os.Getenv("SHOAL_TEST_POSTGRES"), "PostgreSQL connection string (default $SHOAL_TEST_POSTGRES)")
		rounds   = flag.Int("rounds", 3, "rounds; every contender runs once in each")
		duration = flag.Duration("duration", 3*time.Second, "length of one contender's run in a round")
		workers  = flag.Int("workers", 128, "workers sharing the pool")
		conns    = flag.Int("conns", 4, "the pools' MaxConns")
		every    = flag.Int("every", 10, "one statement in this many gives up")
		sleep    = flag.Duration("sleep", 5*time.Millisecond, "how long the statement that gives up sleeps at the server")
		deadline = flag.Duration("deadline", 2*time.Millisecond, "when its caller gives up, from before the acquire")
		out      = flag.String("out", "", "write the markdown report here")
		only     = flag.String("only", "", "run only these contenders, comma-separated (for profiling)")
		cpuProf  = flag.String("cpuprofile", "", "write a CPU profile of the rounds here")
	)
	flag.Parse()
	if *dsn == "" {
		log.Fatal("no connection string: set SHOAL_TEST_POSTGRES or -dsn")
	}
	w := workload{workers: *workers, conns: *conns, every: *every, sleep: *sleep, deadline: *deadline, duration: *duration}
	ctx := context.Background()
	version, err := serverVersion(ctx, *dsn)
	if err != nil {
		log.Fatal(err)
	}
	if *only != "" {
		contenders = slices.DeleteFunc(contenders, func(c contender) bool { return !slices.Contains(strings.Split(*only, ","), c.name) })
	}
	if *cpuProf != "" {
		stop, err := cpuprofile.Start(*cpuProf)
		if err != nil {
			log.Fatal(err)
		}
		defer stop()
	}
	results := make([][]*tally, len(contenders)) // [contender][round]
	for r := range *rounds {
		for k := range contenders {
			i := (k + r) % len(contenders)
			c := contenders[i]
			t, err := runRound(ctx, *dsn, c, w)
			if err != nil {
				log.Fatalf("%s, round %d: %v", c.name, r+1, err)
			}
			results[i] = append(results[i], t)
			fmt.Fprintf(os.Stderr, "round %d %-15s %s\n", r+1, c.name, t.line(w.duration))
		}
	}
	cmd := "go run ./cancel " + strings.Join(os.Args[1:], " ")
	machine := fmt.Sprintf("%s/%s, %d CPUs, %s, %s on loopback", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), version)
	md := report(cmd, machine, w, results)
	fmt.Print(md)
	if *out != "" {
		if err := outfile.Write(*out, []byte(md)); err != nil {
			log.Fatal(err)
		}
	}
}

// runRound opens c's pool, warms it, runs the workload for w.duration
// while counting the pool's connections at the server, and closes it.
func runRound(ctx context.Context, dsn string, c contender, w workload) (*tally, error) {
	app := fmt.Sprintf("shoal-bench-cancel-%s-%d", c.name, os.Getpid())
	cc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cc.RuntimeParams["application_name"] = app
	p, err := c.open(ctx, cc, w.conns)
	if err != nil {
		return nil, err
	}
	defer p.close()
	checker, err := pgcount.Start(ctx, pgcount.Config{ConnString: dsn, Arg: app})
	if err != nil {
		return nil, err
	}
	t := &tally{}
	before := p.newConns()
	end := time.Now().Add(w.duration)
	var wg sync.WaitGroup
	for range w.workers {
		wg.Go(func() { work(p.exec, w, end, t) })
	}
	wg.Wait()
	t.newConns = p.newConns() - before
	report := checker.Stop()
	t.maxAtServer = report.Max
	if report.Errors > 0 {
		return nil, fmt.Errorf("counting at the server: %d samples failed, the last: %v", report.Errors, report.LastErr)
	}
	return t, nil
}

// sleepSQL is the statement that gives up.
func sleepSQL(d time.Duration) string {
	return fmt.Sprintf("SELECT pg_sleep(%g)", d.Seconds())
}

// work runs statements until end: one in w.every under a context that
// ends after w.deadline, the others with none.
func work(exec func(context.Context, string) error, w workload, end time.Time, t *tally) {
	slow := sleepSQL(w.sleep)
	bg := context.Background()
	for i := 1; time.Now().Before(end); i++ {
		if i%w.every != 0 {
			if err := exec(bg, "SELECT 1"); err != nil {
				t.fail(err)
				continue
			}
			t.served.Add(1)
			continue
		}
		ctx, cancel := context.WithTimeout(bg, w.deadline)
		err := exec(ctx, slow)
		returned := time.Now()
		deadline, _ := ctx.Deadline()
		cancel()
		var pe *pgconn.PgError
		switch {
		case err == nil:
			t.served.Add(1)
		case errors.Is(err, context.DeadlineExceeded):
			t.abandoned.Add(1)
			if errors.As(err, &pe) && pe.Code == "57014" {
				t.canceled.Add(1)
				past := int64(returned.Sub(deadline))
				t.past.Add(past)
				for l := t.longest.Load(); past > l && !t.longest.CompareAndSwap(l, past); l = t.longest.Load() {
				}
			}
		default:
			t.fail(err)
		}
	}
}

// fail counts a failure that should not happen, keeping the first.
func (t *tally) fail(err error) {
	t.failed.Add(1)
	t.firstErr.CompareAndSwap(nil, &err)
}

// meanPast is how long after their deadlines the callers of cancelled
// statements got their errors, on average.
func (t *tally) meanPast() time.Duration {
	if n := t.canceled.Load(); n > 0 {
		return time.Duration(t.past.Load() / n).Round(time.Microsecond)
	}
	return 0
}

// line is one contender's round for the progress output.
func (t *tally) line(d time.Duration) string {
	s := fmt.Sprintf("%7d served (%6.0f/s)  %5d abandoned (%5d cancelled at the server, returning %s past the deadline on average, %s at most)  %4d new connections  at most %d at the server",
		t.served.Load(), float64(t.served.Load())/d.Seconds(), t.abandoned.Load(), t.canceled.Load(), t.meanPast(), time.Duration(t.longest.Load()), t.newConns, t.maxAtServer)
	if n := t.failed.Load(); n > 0 {
		s += fmt.Sprintf("  %d FAILED, the first: %v", n, *t.firstErr.Load())
	}
	return s
}

// serverVersion returns the server's version string.
func serverVersion(ctx context.Context, dsn string) (string, error) {
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer c.Close(ctx)
	var v string
	if err := c.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		return "", err
	}
	return "PostgreSQL " + v, nil
}
