package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary be a worker too: run re-executes the
// running binary as its workers, and under go test that is this one.
func TestMain(m *testing.M) {
	if spec := os.Getenv(envWorker); spec != "" {
		os.Exit(workerMain(spec))
	}
	os.Exit(m.Run())
}

// server returns the address in env, skipping the test when it is unset
// (failing under SHOAL_REQUIRE_SERVICES=1).
func server(t *testing.T, env string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		if os.Getenv("SHOAL_REQUIRE_SERVICES") == "1" {
			t.Fatalf("%s is not set and SHOAL_REQUIRE_SERVICES=1", env)
		}
		t.Skipf("%s is not set; run scripts/services.sh and . scripts/test-env.sh", env)
	}
	return v
}

// Every contender says how to open, size, count and limit it: a missing
// one would panic in the middle of a run.
func TestContendersAreComplete(t *testing.T) {
	for _, c := range contenders {
		if c.name == "" || c.about == "" || c.open == nil || c.maxConns == nil || c.dsn == nil ||
			c.count == nil || c.limit == nil || c.missing == nil {
			t.Errorf("contender %q lacks a field", c.name)
		}
	}
}

// A tiny run of every load on the static split, the etcd budget (when
// SHOAL_TEST_ETCD is set) and PgBouncer (when SHOAL_TEST_PGBOUNCER is set),
// in real worker processes: every query succeeds, every worker gets some
// through in its run, no contender holds more connections at the server
// than its limit, and the etcd budget leaves no key behind. Counted over
// the run, warm-up included: on a loaded machine a worker may wait longer
// for its turn on the CPU than the tiny measured window lasts.
func TestTinyRun(t *testing.T) {
	dsn := server(t, "SHOAL_TEST_POSTGRES")
	// Without PgBouncer its cells are skipped, not the test (unless
	// SHOAL_REQUIRE_SERVICES=1 asks for every server).
	bouncer, etcd := os.Getenv("SHOAL_TEST_PGBOUNCER"), os.Getenv("SHOAL_TEST_ETCD")
	if os.Getenv("SHOAL_REQUIRE_SERVICES") == "1" {
		if bouncer == "" {
			t.Fatal("SHOAL_TEST_PGBOUNCER is not set and SHOAL_REQUIRE_SERVICES=1")
		}
		if etcd == "" {
			t.Fatal("SHOAL_TEST_ETCD is not set and SHOAL_REQUIRE_SERVICES=1")
		}
	}
	cfg := config{
		dsn:           dsn,
		pgbouncer:     bouncer,
		pgbouncerPool: 40,
		etcd:          split(etcd),
		etcdMin:       1,
		workers:       2, goroutines: 4, skew: 2, hot: 4, cold: 1, maxConns: 4, budget: 4,
		duration: 300 * time.Millisecond, warmup: 200 * time.Millisecond, sleepShare: 0.5, pause: time.Millisecond,
		loads:      []string{loadUniform, loadSkewed, loadSkewedCapped},
		contenders: []string{"static", "etcd", "pgbouncer"},
		appName:    fmt.Sprintf("shoal-bench-cluster-test-%d", os.Getpid()),
	}
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cells, err := run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 9 {
		t.Fatalf("%d cells, want 9", len(cells))
	}
	for _, c := range cells {
		if c.skipped != "" {
			if (c.contender != "pgbouncer" || bouncer != "") && (c.contender != "etcd" || etcd != "") {
				t.Errorf("%s %s skipped: %s", c.load, c.contender, c.skipped)
			}
			continue
		}
		if c.errors != 0 {
			t.Errorf("%s %s: %d errors, the first: %s", c.load, c.contender, c.errors, c.firstError)
		}
		for w, q := range c.perWorkerAll {
			if q == 0 {
				t.Errorf("%s %s: worker %d completed no query", c.load, c.contender, w)
			}
		}
		if c.server.Max < 1 || c.server.Max > c.limit {
			t.Errorf("%s %s: %d connections at the server at most, want 1 to %d", c.load, c.contender, c.server.Max, c.limit)
		}
		if c.contender != "pgbouncer" && c.server.Max > cfg.budget {
			t.Errorf("%s %s: %d connections, over the budget of %d", c.load, c.contender, c.server.Max, cfg.budget)
		}
		if c.contender == "etcd" {
			if c.etcdLeftover != 0 {
				t.Errorf("%s etcd: the workers left %d keys in etcd", c.load, c.etcdLeftover)
			}
		}
	}
	if md := markdown(cfg, cells, "go test", "test"); len(md) == 0 {
		t.Error("empty report")
	}
}

// Two tiny rounds of one load in real worker processes: the second round
// runs the contenders in reverse, every cell says its round, and the
// report and the trace carry both rounds.
func TestTinyRounds(t *testing.T) {
	dsn := server(t, "SHOAL_TEST_POSTGRES")
	cfg := config{
		dsn:     dsn,
		etcd:    split(os.Getenv("SHOAL_TEST_ETCD")),
		etcdMin: 1,
		workers: 2, goroutines: 2, skew: 1, hot: 2, cold: 1, maxConns: 2, budget: 4,
		duration: 200 * time.Millisecond, warmup: 100 * time.Millisecond, sleepShare: 0.5, pause: time.Millisecond,
		loads:      []string{loadUniform},
		contenders: []string{"static", "etcd"},
		appName:    fmt.Sprintf("shoal-bench-cluster-test-%d", os.Getpid()),
		rounds:     2,
	}
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cells, err := run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cells {
		got = append(got, fmt.Sprintf("%d %s", c.round, c.contender))
		if c.skipped == "" && c.errors != 0 {
			t.Errorf("round %d %s: %d errors, the first: %s", c.round, c.contender, c.errors, c.firstError)
		}
	}
	if want := []string{"1 static", "1 etcd", "2 etcd", "2 static"}; !slices.Equal(got, want) {
		t.Fatalf("cells ran as %v, want %v", got, want)
	}
	md := markdown(cfg, cells, "go test", "test")
	for _, want := range []string{"#### Round 1 (static, etcd)", "#### Round 2 (etcd, static)", "#### Over the 2 rounds"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if j, ok := judge(cells, loadUniform, cfg.budget); !ok || len(j.rounds) != 2 || j.vsStatic.n != 2 {
		t.Errorf("judged (%v) %d rounds with %d etcd / static ratios, want 2 and 2", ok, len(j.rounds), j.vsStatic.n)
	}
	if head, _, _ := strings.Cut(traceCSV(cells), "\n"); !strings.HasSuffix(head, ",round") {
		t.Errorf("the trace's header %q has no round column", head)
	}
}
