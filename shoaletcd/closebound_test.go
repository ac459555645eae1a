package shoaletcd

import (
	"context"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestCloseBoundsItsWaitOnASilentEtcd: Close waits on one request to etcd
// (the lease's revoke), bounded by half the TTL and at most 3s
// (docs/settings.md, "Closing"), so a program shutting down while etcd is
// silent is held up by that bound and no longer. The lease left behind
// expires within the TTL, and the error says so.
func TestCloseBoundsItsWaitOnASilentEtcd(t *testing.T) {
	addr, proc := startEtcd(t)
	opts := Options{Name: "db", Size: 4, Logger: testLogger(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := New(ctx, clientTo(t, addr), opts)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "joined", func() (bool, string) {
		st := b.Status()
		return st.Joined && st.Online, debugState(b)
	})

	// Stopped, not killed: a silent etcd answers nothing and refuses nothing.
	if err := proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = proc.Signal(syscall.SIGCONT) }()

	bound := 2500 * time.Millisecond // the default TTL's half
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- b.Close() }()
	select {
	case err = <-done:
	case <-time.After(bound + 5*time.Second):
		t.Fatalf("Close with etcd stopped has not returned after %v; it bounds its wait to %v", time.Since(start).Round(time.Millisecond), bound)
	}
	took := time.Since(start)
	t.Logf("Close returned after %v with etcd stopped: %v", took.Round(time.Millisecond), err)
	if took > bound+time.Second {
		t.Errorf("Close took %v with etcd stopped, want about %v (half the TTL)", took.Round(time.Millisecond), bound)
	}
	if err == nil || !strings.Contains(err.Error(), "revoking lease") || !strings.Contains(err.Error(), "expires within 5s") {
		t.Errorf("Close with etcd stopped: %v; want an error saying the lease was not revoked and expires within the TTL", err)
	}
}

// The bound on each request to etcd, Close's included, is half the TTL and
// at most 3s (docs/settings.md, "Closing"); TTL's own floor, 2s, keeps it
// at a second or more.
func TestRequestBoundIsHalfTheTTLAtMost3s(t *testing.T) {
	for _, c := range []struct{ ttl, want time.Duration }{
		{0, 2500 * time.Millisecond}, // the default TTL, 5s
		{2 * time.Second, time.Second},
		{6 * time.Second, 3 * time.Second},
		{time.Hour, 3 * time.Second},
	} {
		o, err := Options{Name: "db", Size: 1, TTL: c.ttl}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		if got := o.opTimeout(); got != c.want {
			t.Errorf("TTL %s: each request bounded by %s, want %s", c.ttl, got, c.want)
		}
	}
}

// Close while the member rejoins, with etcd gone silent after the rejoin
// took its new lease, waits on one request's bound too: the attempt's
// lease is revoked by Close within the same bound as the member's, not
// by the failing attempt first.
func TestCloseWhileRejoiningBoundsItsWait(t *testing.T) {
	addr, proc := startEtcd(t)
	c := clientTo(t, addr)
	ka := &cutLease{Lease: c.Lease}
	gl := &afterGrantLease{Lease: ka}
	c.Lease = gl
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := New(ctx, c, Options{Name: "db", Size: 4, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "joined", func() (bool, string) {
		st := b.Status()
		return st.Joined && st.Online, debugState(b)
	})
	b.mu.Lock()
	old := b.lease
	b.mu.Unlock()
	eventually(t, 5*time.Second, "the lease kept alive", func() (bool, string) {
		ka.mu.Lock()
		defer ka.mu.Unlock()
		return ka.ends[old] != nil, debugState(b)
	})

	// The rejoin's new lease is granted, then etcd stops (not killed: a
	// silent etcd answers nothing and refuses nothing).
	stopped := make(chan error, 1)
	gl.arm(func() { stopped <- proc.Signal(syscall.SIGSTOP) })
	defer func() { _ = proc.Signal(syscall.SIGCONT) }()
	ka.cut(old)
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatalf("the member did not try to rejoin: %s", debugState(b))
	}

	bound := 2500 * time.Millisecond // the default TTL's half
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- b.Close() }()
	select {
	case err = <-done:
	case <-time.After(2*bound + 5*time.Second):
		t.Fatalf("Close while rejoining with etcd stopped has not returned after %v; it bounds its wait to %v", time.Since(start).Round(time.Millisecond), bound)
	}
	took := time.Since(start)
	t.Logf("Close returned after %v with etcd stopped: %v", took.Round(time.Millisecond), err)
	if took > bound+time.Second {
		t.Errorf("Close while rejoining took %v with etcd stopped, want about %v (half the TTL)", took.Round(time.Millisecond), bound)
	}
	if err == nil || !strings.Contains(err.Error(), "revoking lease") {
		t.Errorf("Close with etcd stopped: %v; want an error saying the lease was not revoked", err)
	}
}

// afterGrantLease is a client's Lease that, once armed, runs a function
// right after the next lease it grants.
type afterGrantLease struct {
	clientv3.Lease
	mu sync.Mutex
	fn func()
}

func (l *afterGrantLease) Grant(ctx context.Context, ttl int64) (*clientv3.LeaseGrantResponse, error) {
	r, err := l.Lease.Grant(ctx, ttl)
	if err != nil {
		return r, err
	}
	l.mu.Lock()
	fn := l.fn
	l.fn = nil
	l.mu.Unlock()
	if fn != nil {
		fn()
	}
	return r, nil
}

// arm makes the next grant run fn after it.
func (l *afterGrantLease) arm(fn func()) {
	l.mu.Lock()
	l.fn = fn
	l.mu.Unlock()
}
