//go:build unix

package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// kvClient returns an etcd KV client to one member, closed with the test.
func kvClient(t *testing.T, endpoint string) pb.KVClient {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return pb.NewKVClient(conn)
}

// putWithin retries a Put until it succeeds or d passes: right after a
// member dies the others may need an election (a second or two) first.
func putWithin(t *testing.T, kv pb.KVClient, key, value string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := kv.Put(ctx, &pb.PutRequest{Key: []byte(key), Value: []byte(value)})
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("put %s: %v (retried for %v)", key, err, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// get reads key with a linearizable read (it needs a quorum) within d.
func get(kv pb.KVClient, key string, d time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	r, err := kv.Range(ctx, &pb.RangeRequest{Key: []byte(key)})
	if err != nil {
		return "", err
	}
	if len(r.Kvs) != 1 {
		return "", fmt.Errorf("%d values for %s", len(r.Kvs), key)
	}
	return string(r.Kvs[0].Value), nil
}

func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// A three-member cluster keeps taking writes with its leader killed (the
// others elect a new one), and the member, restarted on its data, catches
// up on what it missed.
func TestClusterSurvivesOneKilledMember(t *testing.T) {
	c := StartCluster(t, 3)
	if got := len(c.Endpoints()); got != 3 {
		t.Fatalf("%d endpoints, want 3", got)
	}
	for _, ep := range c.Endpoints() {
		if !strings.HasPrefix(ep, "127.0.0.1:") {
			t.Fatalf("endpoint %s is not on loopback", ep)
		}
	}
	leader := c.Leader()
	a, b := (leader+1)%3, (leader+2)%3 // the followers
	kvA := kvClient(t, c.Member(a).Endpoint)
	putWithin(t, kvA, "before", "1", 10*time.Second)

	c.Member(leader).Kill()
	if c.Member(leader).Running() {
		t.Fatal("the leader still runs after Kill")
	}
	putWithin(t, kvA, "during", "2", 10*time.Second)
	putWithin(t, kvClient(t, c.Member(b).Endpoint), "during1", "3", 10*time.Second)
	if now := c.Leader(); now == leader {
		t.Fatalf("member %d leads although it was killed", now)
	}

	c.Member(leader).Restart()
	v, err := get(kvClient(t, c.Member(leader).Endpoint), "during", 10*time.Second)
	if err != nil || v != "2" {
		t.Fatalf("restarted member reads during = %q, %v; want 2", v, err)
	}
}

// A stopped member answers nothing, so a read times out; continued, it
// answers again.
func TestStopTimesOutAndContResumes(t *testing.T) {
	c := StartSingle(t)
	m := c.Member(0)
	kv := kvClient(t, m.Endpoint)
	putWithin(t, kv, "k", "v", 10*time.Second)

	m.Stop()
	if !m.Stopped() {
		t.Fatal("Stopped() is false after Stop")
	}
	start := time.Now()
	_, err := get(kv, "k", 300*time.Millisecond)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("get from a stopped etcd: %v, want DeadlineExceeded", err)
	}
	if waited := time.Since(start); waited > 3*time.Second {
		t.Fatalf("get from a stopped etcd took %v; the deadline was 300ms", waited)
	}

	m.Cont()
	if v, err := get(kv, "k", 10*time.Second); err != nil || v != "v" {
		t.Fatalf("get after Cont = %q, %v; want v", v, err)
	}
}

// When a test ends, every member is gone, a stopped one too.
func TestCleanupEndsEveryProcess(t *testing.T) {
	var pids []int
	t.Run("cluster", func(t *testing.T) {
		c := StartCluster(t, 3)
		c.Member(1).Stop()
		for _, m := range c.Members {
			pids = append(pids, m.PID())
		}
	})
	if len(pids) != 3 {
		t.Fatalf("got %d pids, want 3", len(pids))
	}
	for _, pid := range pids {
		if !processGone(pid) {
			t.Errorf("etcd pid %d still running after its test ended", pid)
		}
	}
}

// fakeTB stands in for the test when Start is meant to fail or skip: it
// records the failure, ends the goroutine as testing.T would, and runs
// the cleanups when asked.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
	failures []string
	skipped  string
}

func (f *fakeTB) Helper()                      {}
func (f *fakeTB) Cleanup(fn func())            { f.mu.Lock(); f.cleanups = append(f.cleanups, fn); f.mu.Unlock() }
func (f *fakeTB) Error(args ...any)            { f.fail(fmt.Sprint(args...)) }
func (f *fakeTB) Errorf(s string, args ...any) { f.fail(fmt.Sprintf(s, args...)) }
func (f *fakeTB) Fatal(args ...any)            { f.fail(fmt.Sprint(args...)); runtime.Goexit() }
func (f *fakeTB) Fatalf(s string, args ...any) {
	f.fail(fmt.Sprintf(s, args...))
	runtime.Goexit()
}
func (f *fakeTB) Skipf(s string, args ...any) {
	f.mu.Lock()
	f.skipped = fmt.Sprintf(s, args...)
	f.mu.Unlock()
	runtime.Goexit()
}
func (f *fakeTB) Failed() bool { f.mu.Lock(); defer f.mu.Unlock(); return len(f.failures) > 0 }
func (f *fakeTB) fail(msg string) {
	f.mu.Lock()
	f.failures = append(f.failures, msg)
	f.mu.Unlock()
}

// run calls fn in a goroutine of its own (Fatal ends it), then the
// cleanups fn registered, last first.
func (f *fakeTB) run(fn func(tb testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// A start that fails (here: a binary that never answers) still ends every
// process it started.
func TestFailedStartEndsItsProcesses(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	bin := filepath.Join(dir, "fake-etcd")
	script := "#!/bin/sh\necho $$ >>" + pidFile + "\nexec sleep 30\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	f := &fakeTB{TB: t}
	f.run(func(tb testing.TB) {
		Start(tb, Options{Members: 3, Binary: bin, StartTimeout: 500 * time.Millisecond})
		tb.Error("Start returned although no member can answer")
	})
	if len(f.failures) == 0 || !strings.Contains(f.failures[0], "not healthy") {
		t.Fatalf("failures = %q, want one saying a member is not healthy", f.failures)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(b))
	if len(fields) != 3 {
		t.Fatalf("%d processes started, want 3: %q", len(fields), fields)
	}
	for _, s := range fields {
		pid, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		if !processGone(pid) {
			t.Errorf("pid %d still running after the failed start's cleanup", pid)
		}
	}
}

// Without the binary, Start skips, unless SHOAL_REQUIRE_SERVICES=1.
func TestMissingBinary(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-etcd-here")
	for _, required := range []string{"", "1"} {
		t.Setenv(envRequire, required)
		f := &fakeTB{TB: t}
		f.run(func(tb testing.TB) { Start(tb, Options{Binary: missing}) })
		switch {
		case required == "1" && (len(f.failures) != 1 || f.skipped != ""):
			t.Errorf("required: failures %q, skipped %q; want one failure", f.failures, f.skipped)
		case required == "" && (len(f.failures) != 0 || f.skipped == ""):
			t.Errorf("not required: failures %q, skipped %q; want a skip", f.failures, f.skipped)
		}
	}
}
