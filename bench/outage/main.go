package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/shoalpool/shoal/bench/internal/outfile"
)

// The cases, in the order they run and appear.
const (
	caseNever    = "never"
	casePGDown   = "pg-down"
	caseHTTPDown = "http-down"
	caseGiveUp   = "give-up"
	caseAtServer = "at-server"
)

var allCases = []string{caseNever, casePGDown, caseHTTPDown, caseGiveUp, caseAtServer}

// options are one run's settings, from the flags.
type options struct {
	cases    []string
	dsn      string
	pgBin    string
	never    neverSpec
	pgDown   downSpec
	httpDown downSpec
	giveUp   giveUpSpec
	atServer atServerSpec
}

func main() {
	var (
		cases    = flag.String("cases", strings.Join(allCases, ","), "cases to run, comma-separated: "+strings.Join(allCases, ", "))
		out      = flag.String("out", "", "write the markdown report here")
		dsn      = flag.String("dsn", os.Getenv("SHOAL_TEST_POSTGRES"), "the shared PostgreSQL's connection string (default $SHOAL_TEST_POSTGRES)")
		pgBin    = flag.String("pg-bin", "", "directory of initdb and postgres for the throwaway server (default: the newest /usr/lib/postgresql/*/bin)")
		tries    = flag.Int("tries", 5, "never: fresh clients per contender against the refused port")
		first    = flag.Duration("first-deadline", 10*time.Second, "never: the first request's deadline")
		watch    = flag.Duration("login-window", 6*time.Second, "never: how long a pool that cannot log in is watched after its first error")
		workers  = flag.Int("workers", 32, "pg-down, http-down: workers")
		deadline = flag.Duration("deadline", time.Second, "pg-down, http-down: each call's deadline")
		pause    = flag.Duration("fail-pause", 10*time.Millisecond, "pg-down, http-down: a worker's pause after a failed call (0: none)")
		conns    = flag.Int("down-conns", 8, "pg-down, http-down: the pool's MaxConns")
		before   = flag.Duration("before", 3*time.Second, "pg-down, http-down: the server stops this long after the start")
		down     = flag.Duration("down", 3*time.Second, "pg-down, http-down: how long the server stays down")
		after    = flag.Duration("after", 4*time.Second, "pg-down, http-down: how long the run goes on after the server's return")
		rounds   = flag.Int("rounds", 1, "pg-down, http-down: outages per pool, the pools' order reversed in every other round")
		callers  = flag.Int("give-up-callers", 128, "give-up: callers")
		gConns   = flag.Int("give-up-conns", 4, "give-up: pool_max_conns")
		every    = flag.Int("give-up-every", 10, "give-up: every this many queries of a caller, one gives up")
		gDead    = flag.Duration("give-up-deadline", 2*time.Millisecond, "give-up: the deadline of the query that gives up")
		aCallers = flag.Int("at-server-callers", 32, "at-server: callers")
		aConns   = flag.Int("at-server-conns", 4, "at-server: pool_max_conns")
		abandon  = flag.Duration("abandon", 50*time.Millisecond, "at-server: how long a caller waits for its pg_sleep(1)")
		duration = flag.Duration("duration", 3*time.Second, "give-up, at-server: length of a run")
	)
	flag.Parse()
	o := options{
		dsn:   *dsn,
		pgBin: *pgBin,
		never: neverSpec{tries: *tries, deadline: *first, window: *watch, dsn: *dsn},
		pgDown: downSpec{workerSpec: workerSpec{workers: *workers, deadline: *deadline, failPause: *pause},
			maxConns: *conns, warm: time.Second, before: *before, down: *down, after: *after, rounds: *rounds},
		giveUp:   giveUpSpec{callers: *callers, maxConns: *gConns, duration: *duration, every: *every, deadline: *gDead},
		atServer: atServerSpec{callers: *aCallers, maxConns: *aConns, duration: *duration, abandon: *abandon, poll: 20 * time.Millisecond},
	}
	o.httpDown = o.pgDown
	o.pgDown.warm = min(o.pgDown.warm, o.pgDown.before/2)
	o.httpDown.warm = o.pgDown.warm
	for _, c := range strings.Split(*cases, ",") {
		c = strings.TrimSpace(c)
		if !slices.Contains(allCases, c) {
			log.Fatalf("unknown case %q: want some of %s", c, strings.Join(allCases, ", "))
		}
		o.cases = append(o.cases, c)
	}
	if err := o.check(); err != nil {
		log.Fatal(err)
	}
	stopSignals := onSignal(runCleanups)
	defer stopSignals()
	cmd := "go run ./outage " + strings.Join(os.Args[1:], " ")
	md, err := run(context.Background(), o, cmd)
	runCleanups()
	fmt.Print(md)
	if *out != "" {
		if werr := outfile.Write(*out, []byte(md)); werr != nil {
			log.Fatal(werr)
		}
	}
	if err != nil {
		log.Fatal(err)
	}
}

// check reports the first setting that cannot make a run.
func (o options) check() error {
	switch {
	case o.never.tries < 1 || o.never.deadline <= 0 || o.never.window < 0:
		return errors.New("need -tries >= 1, -first-deadline > 0 and -login-window >= 0")
	case o.pgDown.workers < 1 || o.pgDown.deadline <= 0 || o.pgDown.failPause < 0 || o.pgDown.maxConns < 1:
		return errors.New("need -workers >= 1, -deadline > 0, -fail-pause >= 0 and -down-conns >= 1")
	case o.pgDown.before <= 0 || o.pgDown.down <= 0 || o.pgDown.after <= 0 || o.pgDown.rounds < 1:
		return errors.New("need -before, -down and -after > 0 and -rounds >= 1")
	case o.giveUp.callers < 1 || o.giveUp.maxConns < 1 || o.giveUp.every < 1 || o.giveUp.deadline <= 0:
		return errors.New("need -give-up-callers, -give-up-conns, -give-up-every >= 1 and -give-up-deadline > 0")
	case o.atServer.callers < 1 || o.atServer.maxConns < 1 || o.atServer.abandon <= 0:
		return errors.New("need -at-server-callers, -at-server-conns >= 1 and -abandon > 0")
	case o.giveUp.duration <= 0:
		return errors.New("need -duration > 0")
	}
	return nil
}
