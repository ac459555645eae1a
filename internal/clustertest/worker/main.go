// Command worker is one process of internal/clustertest's scenarios: a
// shoalpgx pool on a shoaletcd budget, kept busy by a number of goroutines
// that the test changes through stdin, and reporting its state as a JSON
// line on stdout every -report.
//
// Commands on stdin, one a line:
//
//	load N   run N goroutines of queries (0 makes the worker idle)
//
// The worker closes its pool and its budget (revoking its lease) and exits
// when stdin closes, so a test that dies takes its workers with it; a test
// that wants a worker to leave the budget closes its stdin.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/shoaletcd"
	"github.com/shoalpool/shoal/shoalpgx"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// flags is the worker's command line.
type flags struct {
	etcd     string
	postgres string
	name     string
	prefix   string
	label    string
	size     int
	min      int
	ttl      time.Duration
	idle     time.Duration
	maxConns int
	app      string
	load     int
	sleep    time.Duration
	report   time.Duration
}

func parseFlags() flags {
	var f flags
	flag.StringVar(&f.etcd, "etcd", "", "etcd endpoints, comma-separated (host:port)")
	flag.StringVar(&f.postgres, "postgres", "", "PostgreSQL connection string")
	flag.StringVar(&f.name, "name", "", "budget name")
	flag.StringVar(&f.prefix, "prefix", "", "budget key prefix (empty: shoaletcd's default)")
	flag.StringVar(&f.label, "label", "", "label shown to the budget's other members")
	flag.IntVar(&f.size, "size", 0, "budget size N")
	flag.IntVar(&f.min, "min", 0, "this member's minimum share")
	flag.DurationVar(&f.ttl, "ttl", 0, "lease TTL (0: shoaletcd's default)")
	flag.DurationVar(&f.idle, "idle", 0, "IdleTime (0: shoaletcd's default)")
	flag.IntVar(&f.maxConns, "max-conns", 0, "the pool's MaxConns")
	flag.StringVar(&f.app, "app", "", "application_name of the pool's connections")
	flag.IntVar(&f.load, "load", 0, "goroutines of queries to start with")
	flag.DurationVar(&f.sleep, "sleep", 5*time.Millisecond, "how long each query sleeps at the server")
	flag.DurationVar(&f.report, "report", 100*time.Millisecond, "time between reports")
	flag.Parse()
	return f
}

func main() {
	if err := run(parseFlags(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

// run opens the budget and the pool, serves the commands on in and
// reports on out until in closes, then closes everything in order.
func run(f flags, in io.Reader, out io.Writer) error {
	if f.etcd == "" || f.postgres == "" || f.name == "" || f.size <= 0 || f.maxConns <= 0 || f.app == "" {
		return fmt.Errorf("-etcd, -postgres, -name, -size, -max-conns and -app are required")
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   strings.Split(f.etcd, ","),
		DialTimeout: 2 * time.Second,
		Logger:      zap.NewNop(),
		// gRPC's default reconnect backoff grows to two minutes; the
		// scenarios need a worker to notice etcd's return within a second.
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, MaxDelay: time.Second},
		})},
	})
	if err != nil {
		return fmt.Errorf("etcd client: %w", err)
	}
	defer client.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	budget, err := shoaletcd.New(ctx, client, shoaletcd.Options{
		Name: f.name, Prefix: f.prefix, Size: f.size, Min: f.min, TTL: f.ttl, IdleTime: f.idle,
		Label: f.label, Logger: logger,
	})
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		if err := budget.Close(); err != nil {
			logger.Warn("closing the budget", "err", err)
		}
	}()

	cfg, err := shoalpgx.ParseConfig(f.postgres)
	if err != nil {
		return err
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = f.app
	cfg.MaxConns = int32(f.maxConns)
	cfg.Budget = budget
	obs := &observer{}
	cfg.Observer = obs
	// Counted to tell a slot the fence refused before dialling (no
	// connection at the server) from one refused after connecting.
	cfg.BeforeConnect = func(context.Context, *pgx.ConnConfig) error {
		obs.connects.Add(1)
		return nil
	}
	pool, err := shoalpgx.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return err
	}
	// Closed before the budget (deferred above), so that every permit is
	// back before the lease is revoked.
	defer pool.Close()

	l := newLoad(pool, f.sleep)
	defer l.stop()
	l.set(f.load)

	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			if err := command(l, sc.Text()); err != nil {
				logger.Warn("bad command", "line", sc.Text(), "err", err)
			}
		}
	}()
	rep := reporter{out: out, pool: pool, budget: budget, obs: obs, load: l}
	tick := time.NewTicker(f.report)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-tick.C:
			if err := rep.write(); err != nil {
				return err // the test stopped reading: it is gone
			}
		}
	}
}

// command carries out one line from stdin.
func command(l *load, line string) error {
	fields := strings.Fields(line)
	if len(fields) == 2 && fields[0] == "load" {
		n, err := strconv.Atoi(fields[1])
		if err != nil || n < 0 || n > 4096 {
			return fmt.Errorf("load wants a count in [0, 4096]")
		}
		l.set(n)
		return nil
	}
	return fmt.Errorf("unknown command")
}
