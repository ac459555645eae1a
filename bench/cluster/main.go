package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/bench/internal/outfile"
)

func main() {
	if spec := os.Getenv(envWorker); spec != "" {
		os.Exit(workerMain(spec))
	}
	var (
		dsn        = flag.String("dsn", os.Getenv("SHOAL_TEST_POSTGRES"), "PostgreSQL, for the direct contenders and the counting (default $SHOAL_TEST_POSTGRES)")
		pgbouncer  = flag.String("pgbouncer", os.Getenv("SHOAL_TEST_PGBOUNCER"), "PgBouncer in front of the same database (default $SHOAL_TEST_PGBOUNCER)")
		bounceUser = flag.String("pgbouncer-user", "", "the role PgBouncer logs into PostgreSQL as (default: the user in -pgbouncer)")
		bouncePool = flag.Int("pgbouncer-pool", 40, "PgBouncer's pool size, as configured in PgBouncer: the limit its connections are checked against")
		etcd       = flag.String("etcd", os.Getenv("SHOAL_TEST_ETCD"), "etcd endpoints for the etcd contender, comma-separated (default $SHOAL_TEST_ETCD)")
		etcdMin    = flag.Int("etcd-min", 2, "the etcd contender: each worker's minimum share (shoaletcd Options.Min)")
		etcdIdle   = flag.Duration("etcd-idle", 0, "the etcd contender: how long a worker keeps a share its demand fell below (shoaletcd Options.IdleTime; 0 for its default, 2s)")
		workers    = flag.Int("workers", 4, "worker processes")
		goroutines = flag.Int("goroutines", 64, "goroutines per worker on the uniform load, and per cold worker on skewed-capped")
		skew       = flag.Int("skew", 4, "the skewed-capped load's hot worker runs this many times -goroutines")
		hot        = flag.Int("hot", 32, "the skewed load: the hot worker's (worker 0's) goroutines")
		cold       = flag.Int("cold", 4, "the skewed load: each other worker's goroutines")
		maxConns   = flag.Int("maxconns", 32, "each worker's pool size (but in the static split)")
		budget     = flag.Int("budget", 40, "connections all the workers may hold together")
		duration   = flag.Duration("duration", 15*time.Second, "measured time per cell")
		warmup     = flag.Duration("warmup", 3*time.Second, "unmeasured time before it, for pools and shares to settle")
		sleepShare = flag.Float64("sleep", 0.5, "share of the queries that are pg_sleep(-pause)")
		pause      = flag.Duration("pause", time.Millisecond, "how long the sleeping queries sleep at the server (pg_sleep), holding their connection")
		loads      = flag.String("loads", "uniform,skewed", "loads, comma-separated: uniform, skewed, skewed-capped (-skew times -goroutines on worker 0, -goroutines on the others)")
		only       = flag.String("contenders", "static,etcd,pgbouncer", "contenders, comma-separated, in the order to run")
		app        = flag.String("appname", defaultAppName, "application_name of the workers' connections, the one counted")
		out        = flag.String("out", "", "write the markdown fragment here")
		profile    = flag.String("cpuprofile", "", "write each worker's CPU profile into this directory, one file per load, contender and worker")
		rounds     = flag.Int("rounds", 1, "run every load's cells this many times, the contenders in the given order in odd rounds and reversed in even ones, and judge the targets on the rounds' median ratios")
		trace      = flag.String("trace", "", "write every worker's pool samples (share, demand, connections, every 100ms) here, as CSV")
	)
	flag.Parse()
	cfg := config{
		dsn: *dsn, pgbouncer: *pgbouncer, pgbouncerUser: *bounceUser, pgbouncerPool: *bouncePool, etcd: split(*etcd),
		etcdMin: *etcdMin, etcdIdle: *etcdIdle, profileDir: *profile,
		workers: *workers, goroutines: *goroutines, skew: *skew, hot: *hot, cold: *cold, maxConns: *maxConns, budget: *budget,
		duration: *duration, warmup: *warmup, sleepShare: *sleepShare, pause: *pause,
		loads: split(*loads), contenders: split(*only), appName: *app, rounds: *rounds,
	}
	if err := cfg.check(); err != nil {
		log.Fatal(err)
	}
	if cfg.profileDir != "" {
		if err := os.MkdirAll(cfg.profileDir, 0o755); err != nil {
			log.Fatal(err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	version := serverVersion(ctx, cfg.dsn)
	cells, err := run(ctx, cfg)
	if err != nil {
		stop()
		log.Fatal(err)
	}
	cmd := "go run ./cluster " + strings.Join(os.Args[1:], " ")
	machine := fmt.Sprintf("%s/%s, %d CPUs (GOMAXPROCS %d), %s, %s on loopback",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), version)
	md := markdown(cfg, cells, cmd, machine)
	fmt.Print(md)
	if *out != "" {
		if err := outfile.Write(*out, []byte(md)); err != nil {
			stop()
			log.Fatal(err)
		}
	}
	if *trace != "" {
		if err := outfile.Write(*trace, []byte(traceCSV(cells))); err != nil {
			stop()
			log.Fatal(err)
		}
	}
}

// check fills in what the flags left to it and rejects what cannot run.
func (cfg *config) check() error {
	if cfg.appName == "" {
		cfg.appName = defaultAppName
	}
	if cfg.rounds == 0 {
		cfg.rounds = 1
	}
	if cfg.rounds < 0 {
		return fmt.Errorf("-rounds must be >= 1")
	}
	if cfg.workers < 1 || cfg.goroutines < 1 || cfg.skew < 1 || cfg.hot < 1 || cfg.cold < 1 || cfg.maxConns < 1 {
		return fmt.Errorf("-workers, -goroutines, -skew, -hot, -cold and -maxconns must be >= 1")
	}
	if cfg.budget < cfg.workers {
		return fmt.Errorf("-budget %d is below -workers %d: the static split would give a worker no connection", cfg.budget, cfg.workers)
	}
	if cfg.etcdMin < 0 || cfg.etcdIdle < 0 {
		return fmt.Errorf("-etcd-min and -etcd-idle must be >= 0")
	}
	if cfg.etcdMin*cfg.workers > cfg.budget {
		return fmt.Errorf("-etcd-min %d times -workers %d is above -budget %d: shoaletcd refuses minimums that do not fit", cfg.etcdMin, cfg.workers, cfg.budget)
	}
	if cfg.duration <= 0 || cfg.warmup < 0 {
		return fmt.Errorf("-duration must be > 0 and -warmup >= 0")
	}
	if cfg.pause <= 0 {
		return fmt.Errorf("-pause must be > 0")
	}
	if cfg.sleepShare < 0 || cfg.sleepShare > 1 {
		return fmt.Errorf("-sleep must be in [0, 1]")
	}
	for _, l := range cfg.loads {
		if l != loadUniform && l != loadSkewed && l != loadSkewedCapped {
			return fmt.Errorf("unknown load %q (uniform, skewed, skewed-capped)", l)
		}
	}
	for _, c := range cfg.contenders {
		if _, ok := contenderByName(c); !ok {
			return fmt.Errorf("unknown contender %q (static, etcd, pgbouncer)", c)
		}
	}
	if cfg.pgbouncer != "" && cfg.pgbouncerUser == "" {
		pc, err := pgx.ParseConfig(cfg.pgbouncer)
		if err != nil {
			return fmt.Errorf("-pgbouncer: %w", err)
		}
		cfg.pgbouncerUser = pc.User
	}
	return nil
}

// serverVersion names the server for the report ("PostgreSQL" if it
// cannot be asked; the cells will say why).
func serverVersion(ctx context.Context, dsn string) string {
	if dsn == "" {
		return "PostgreSQL"
	}
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "PostgreSQL"
	}
	pc.RuntimeParams["application_name"] = defaultAppName + "-runner"
	c, err := pgx.ConnectConfig(ctx, pc)
	if err != nil {
		return "PostgreSQL"
	}
	defer c.Close(ctx)
	var v string
	if err := c.QueryRow(ctx, "SELECT 'PostgreSQL ' || current_setting('server_version')").Scan(&v); err != nil {
		return "PostgreSQL"
	}
	return v
}

// split splits a comma-separated flag, dropping empty fields.
func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
