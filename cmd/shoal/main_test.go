package main

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: every server,
// pool and transport a run starts must be gone when it returns.
func TestMain(m *testing.M) {
	if os.Getenv(asCommandEnv) == "1" {
		// Re-executed by a test as the command itself, signals and all.
		main()
	}
	goleak.VerifyTestMain(m)
}

// asCommandEnv, set to 1, makes the test binary run as the command, with
// its arguments, for a test that needs a process of its own.
const asCommandEnv = "SHOAL_TEST_AS_COMMAND"

// testTimes shortens every case: the tests check shapes and errors, not
// speed.
var testTimes = []string{"--duration", "120ms", "--warmup", "20ms"}

// benchTimes are testTimes for bench, in one round; the test of rounds
// runs the default.
var benchTimes = append(slices.Clone(testTimes), "--rounds", "1")

// result is what one in-process run of the command produced.
type result struct {
	code           int
	stdout, stderr string
}

// runShoal runs the command in-process with args.
func runShoal(t *testing.T, args ...string) result {
	t.Helper()
	return runShoalCtx(t, context.Background(), args...)
}

func runShoalCtx(t *testing.T, ctx context.Context, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// wantCode fails the test when the exit status is not want.
func (r result) wantCode(t *testing.T, want int) {
	t.Helper()
	if r.code != want {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
}

// requireServices reports whether a missing server must fail the test.
func requireServices() bool { return os.Getenv("SHOAL_REQUIRE_SERVICES") == "1" }

func TestUsage(t *testing.T) {
	r := runShoal(t)
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "bench") || !strings.Contains(r.stderr, "sweep") {
		t.Errorf("usage does not list the commands:\n%s", r.stderr)
	}
	r = runShoal(t, "help", "bench")
	r.wantCode(t, exitOK)
	for _, want := range []string{"--target", "--quick", "--chart", "churn", "partitions", "multiplex", "transport"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help bench lacks %q:\n%s", want, r.stdout)
		}
	}
}

// elapsed runs f and returns how long it took.
func elapsed(f func()) time.Duration {
	t0 := time.Now()
	f()
	return time.Since(t0)
}

// skipOrFail skips a test whose service is missing, or fails it when
// SHOAL_REQUIRE_SERVICES=1 says the services must be there.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if requireServices() {
		t.Fatal(why + " and SHOAL_REQUIRE_SERVICES=1")
	}
	t.Skip(why)
}
