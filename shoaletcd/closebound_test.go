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

// Close while the member rejoins, with etcd gone silent at a step of the
// rejoin, waits on one request's bound too: the leases the rejoin has not
// done with (the new one of an attempt that cannot finish, the old one it
// is giving up) are revoked by Close within the same bound as the
// member's, not by the rejoin first.
func TestCloseWhileRejoiningBoundsItsWait(t *testing.T) {
	t.Run("after the grant", func(t *testing.T) { testCloseWhileRejoining(t, false) })
	t.Run("revoking the old lease", func(t *testing.T) { testCloseWhileRejoining(t, true) })
}

// testCloseWhileRejoining stops etcd right after the rejoin's new lease is
// granted, or right before it revokes the old one (atRevoke), and closes.
func testCloseWhileRejoining(t *testing.T, atRevoke bool) {
	addr, proc := startEtcd(t)
	c := clientTo(t, addr)
	ka := &cutLease{Lease: c.Lease}
	hl := &hookLease{Lease: ka}
	c.Lease = hl
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
	// The session's keep-alive, not the one the join ran until it
	// returned: serve starts it before it reads the view.
	eventually(t, 5*time.Second, "the lease kept alive by the session", func() (bool, string) {
		b.mu.Lock()
		served := b.view.rev != 0
		b.mu.Unlock()
		ka.mu.Lock()
		defer ka.mu.Unlock()
		return served && ka.ends[old] != nil, debugState(b)
	})

	// Stopped, not killed: a silent etcd answers nothing and refuses nothing.
	stopped := make(chan error, 1)
	stop := func() { stopped <- proc.Signal(syscall.SIGSTOP) }
	if atRevoke {
		hl.arm(nil, stop)
	} else {
		hl.arm(stop, nil)
	}
	defer func() { _ = proc.Signal(syscall.SIGCONT) }()
	ka.cut(old)
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatalf("the member did not rejoin as far as the step: %s", debugState(b))
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

// hookLease is a client's Lease that, once armed, runs a function right
// after the next lease it grants, or right before or after the next
// revocation.
type hookLease struct {
	clientv3.Lease
	mu           sync.Mutex
	afterGrant   func()
	beforeRevoke func()
	afterRevoke  func(clientv3.LeaseID)
}

func (l *hookLease) Grant(ctx context.Context, ttl int64) (*clientv3.LeaseGrantResponse, error) {
	r, err := l.Lease.Grant(ctx, ttl)
	if err != nil {
		return r, err
	}
	l.mu.Lock()
	fn := l.afterGrant
	l.afterGrant = nil
	l.mu.Unlock()
	if fn != nil {
		fn()
	}
	return r, nil
}

func (l *hookLease) Revoke(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseRevokeResponse, error) {
	l.mu.Lock()
	fn := l.beforeRevoke
	l.beforeRevoke = nil
	l.mu.Unlock()
	if fn != nil {
		fn()
	}
	r, err := l.Lease.Revoke(ctx, id)
	l.mu.Lock()
	after := l.afterRevoke
	l.afterRevoke = nil
	l.mu.Unlock()
	if after != nil {
		after(id)
	}
	return r, err
}

// arm makes the next grant run afterGrant after it, and the next
// revocation run beforeRevoke before it (nil: nothing).
func (l *hookLease) arm(afterGrant, beforeRevoke func()) {
	l.mu.Lock()
	l.afterGrant, l.beforeRevoke = afterGrant, beforeRevoke
	l.mu.Unlock()
}

// armAfterRevoke makes the next revocation run fn, with the lease, after it.
func (l *hookLease) armAfterRevoke(fn func(clientv3.LeaseID)) {
	l.mu.Lock()
	l.afterRevoke = fn
	l.mu.Unlock()
}
