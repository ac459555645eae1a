package shoaletcd

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/shoalpool/shoal/internal/etcdtest"
)

// proxy is a loopback TCP proxy to target that refuses connections (closes
// them at once) until forwarding is switched on.
type proxy struct {
	ln      net.Listener
	target  string
	forward atomic.Bool
	mu      sync.Mutex
	conns   []net.Conn
	wg      sync.WaitGroup
}

func startProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.forward.Load() {
			_ = c.Close()
			continue
		}
		d, err := net.DialTimeout("tcp", p.target, 2*time.Second)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, d)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { defer p.wg.Done(); _, _ = io.Copy(d, c); _ = d.Close() }()
		go func() { defer p.wg.Done(); _, _ = io.Copy(c, d); _ = c.Close() }()
	}
}

// clientTo returns a client to addr that reconnects within a second or so
// (gRPC's default backoff grows to two minutes), closed at the end.
func clientTo(t *testing.T, addr string) *clientv3.Client {
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{addr},
		DialTimeout: time.Second,
		Logger:      zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, MaxDelay: time.Second},
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// With etcd unreachable at boot, New succeeds at once, the member runs on
// its Min with local permits numbered from the top, and it joins when etcd
// answers: its permits get their slot keys without being dropped, and it
// grows to its fair share.
func TestUnreachableAtStart(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	watchSlots(t, admin, prefix, "db", 10)
	other := newFakePool(t, newBudget(t, addr, Options{Name: "db", Size: 10, Prefix: prefix}), 3)
	eventually(t, 2*time.Second, "the other member holds 3", func() (bool, string) {
		return other.holding() == 3, fmt.Sprint(other.holding())
	})

	px := startProxy(t, addr)
	start := time.Now()
	b, err := New(context.Background(), clientTo(t, px.ln.Addr().String()),
		Options{Name: "db", Size: 10, Min: 2, Prefix: prefix, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("New with etcd unreachable: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	t.Logf("New returned after %v with etcd unreachable", time.Since(start).Round(time.Millisecond))
	if st := b.Status(); st.Joined || st.Members != 0 {
		t.Fatalf("joined with etcd unreachable: %+v", st)
	}
	f := newFakePool(t, b, 5)
	eventually(t, 2*time.Second, "running on Min 2", func() (bool, string) {
		return f.holding() == 2 && f.share.Load() == 2, fmt.Sprintf("holds %d, share %d", f.holding(), f.share.Load())
	})
	time.Sleep(300 * time.Millisecond)
	if f.holding() != 2 {
		t.Fatalf("grew past Min while etcd was unreachable: holds %d", f.holding())
	}
	f.mu.Lock()
	var slots []int
	for _, p := range f.held {
		slots = append(slots, p.Slot())
	}
	f.mu.Unlock()
	t.Logf("local permits on slots %v", slots)
	for _, s := range slots {
		if s < 8 {
			t.Fatalf("local permits %v not taken from the top of [0,10)", slots)
		}
	}

	// A boot permit whose number the other member holds cannot keep its
	// connection: that connection holds the number's fence lock, so a key
	// of another number would leave this one free in etcd and locked at
	// the server. It is given up (closed on release); the others keep
	// theirs.
	other.mu.Lock()
	collisions := 0
	for _, p := range other.held {
		for _, s := range slots {
			if p.Slot() == s {
				collisions++
			}
		}
	}
	other.mu.Unlock()
	px.forward.Store(true)
	eventually(t, 10*time.Second, "joined and grown to demand 5", func() (bool, string) {
		st := b.Status()
		return st.Joined && st.Online && f.holding() == 5 && st.Members == 2, fmt.Sprintf("%+v, holds %d", st, f.holding())
	})
	// The boot permits whose numbers the other held are revoked; a
	// share that dips below what the pool holds while the division
	// settles may close others, which is not what this test is about.
	if r := f.revokes.Load(); r != int64(collisions) {
		t.Fatalf("%d permits revoked on joining, want %d (the boot permits whose numbers the other held); %d dropped in all", r, collisions, f.drops.Load())
	}
	// Each boot permit kept got the key of its own number.
	v, err := Read(context.Background(), admin, "db", prefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range v.Members {
		if m.ID == b.ID() && len(m.Slots) != f.holding() {
			t.Fatalf("member holds %d permits but %d slot keys %v", f.holding(), len(m.Slots), m.Slots)
		}
	}
	t.Logf("view: %+v", v)
}

// While etcd is stopped (SIGSTOP), members keep every permit and never
// grow, short of the TTL and well past it; when it resumes they rejoin
// (re-taking their keys under new leases when the old ones expired)
// without dropping a connection, and shares move again.
func TestEtcdStopped(t *testing.T) {
	addr, proc := startEtcd(t)
	admin := clientTo(t, addr)
	const ttl = 3 * time.Second
	opts := Options{Name: "db", Size: 10, TTL: ttl, IdleTime: time.Second}
	watchSlots(t, admin, DefaultPrefix, "db", 10)
	newMember := func(d int) *fakePool {
		o := opts
		o.Logger = testLogger(t)
		b, err := New(context.Background(), clientTo(t, addr), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		return newFakePool(t, b, d)
	}
	a, b := newMember(100), newMember(100)
	eventually(t, 3*time.Second, "5 each", func() (bool, string) {
		return a.holding() == 5 && b.holding() == 5, fmt.Sprintf("A %d %s, B %d %s", a.holding(), debugState(a.b), b.holding(), debugState(b.b))
	})
	time.Sleep(500 * time.Millisecond) // settled: count drops from here
	a.drops.Store(0)
	b.drops.Store(0)

	// hold stops etcd for d, checks every 50ms that nobody holds more than
	// before (nor, unless its own demand fell, less), and resumes it.
	hold := func(d time.Duration, during func()) {
		beforeA, beforeB := a.holding(), b.holding()
		if err := proc.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		stopped := time.Now()
		resumed := false
		defer func() {
			if !resumed {
				_ = proc.Signal(syscall.SIGCONT)
			}
		}()
		if during != nil {
			during()
		}
		for time.Since(stopped) < d {
			if ha, hb := a.holding(), b.holding(); ha > beforeA || hb != beforeB {
				t.Fatalf("%v into the stop: A holds %d (was %d), B %d (was %d)", time.Since(stopped).Round(time.Millisecond), ha, beforeA, hb, beforeB)
			}
			time.Sleep(50 * time.Millisecond)
		}
		resumed = true
		if err := proc.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}

	hold(ttl/2, nil)
	time.Sleep(time.Second)
	if a.holding() != 5 || b.holding() != 5 || a.drops.Load() != 0 || b.drops.Load() != 0 {
		t.Fatalf("after a short stop: A holds %d (dropped %d), B %d (dropped %d)", a.holding(), a.drops.Load(), b.holding(), b.drops.Load())
	}

	// Past the TTL, and A's demand falls meanwhile: A lets 3 go, but B may
	// not take them until etcd is back.
	hold(ttl+3*time.Second, func() { a.demand.Store(2) })
	resumed := time.Now()
	eventually(t, 10*time.Second, "both online again; B grown into A's slots", func() (bool, string) {
		sa, sb := a.b.Status(), b.b.Status()
		return sa.Online && sb.Online && a.holding() == 2 && b.holding() == 8,
			fmt.Sprintf("A %+v holds %d; B %+v holds %d", sa, a.holding(), sb, b.holding())
	})
	t.Logf("back to fair shares %v after etcd resumed", time.Since(resumed).Round(time.Millisecond))
	if d := b.drops.Load(); d != 0 {
		t.Fatalf("B dropped %d permits across the stop", d)
	}
	if d := a.drops.Load(); d != 3 {
		t.Fatalf("A dropped %d permits, want the 3 its demand let go", d)
	}
	if s := slotsHeld(t, admin, DefaultPrefix, "db"); s != 10 {
		t.Fatalf("%d slot keys after the stop, want 10", s)
	}
}

// A member whose keep-alive stream ended rejoins while its old lease is
// still alive at the server, so it reads its slot keys as its own; the old
// lease then ends before it moves them (etcd revokes a lease that expired
// while it was stopped up to half a second after it resumes). The keys are
// free then: it creates them again under its new lease and keeps every
// connection, instead of taking them for another member's and closing
// them (TestEtcdStopped's "B dropped 2 permits across the stop"). A key
// another member created in that moment stays the other's, and only its
// connection is revoked.
func TestRejoinOldLeaseEndsMidRetake(t *testing.T) {
	for _, stolen := range []int{0, 1} {
		t.Run(fmt.Sprintf("stolen=%d", stolen), func(t *testing.T) { testRejoinOldLeaseEnds(t, stolen) })
	}
}

// testRejoinOldLeaseEnds holds 5 permits, ends the member's keep-alive
// stream, and revokes its old lease right after its rejoin read the slots;
// another member then creates the keys of stolen of its permits.
func testRejoinOldLeaseEnds(t *testing.T, stolen int) {
	m := newRejoinMember(t, rejoinSetup{permits: 5})
	admin, k, ka, kv, b, f := m.admin, m.k, m.ka, m.kv, m.b, m.f

	ctx, other := m.otherMember(t, 10*time.Second)
	b.mu.Lock()
	old := b.lease
	var held []*permit
	steal := map[int]bool{}
	for p := range b.permits {
		held = append(held, p)
		if len(steal) < stolen {
			steal[p.slot] = true
		}
	}
	b.mu.Unlock()
	var revoked atomic.Bool
	kv.after(k.slots(), func() {
		if _, err := admin.Revoke(ctx, old); err != nil {
			t.Errorf("revoking the old lease: %v", err)
		}
		for s := range steal {
			if _, err := admin.Put(ctx, k.slot(s), "other", clientv3.WithLease(other)); err != nil {
				t.Errorf("taking slot %d: %v", s, err)
			}
		}
		revoked.Store(true)
	})
	ka.cut(old)
	eventually(t, 10*time.Second, "rejoined under a new lease", func() (bool, string) {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.session && b.lease != old, fmt.Sprintf("lease %x (old %x), session %v", int64(b.lease), int64(old), b.session)
	})
	if !revoked.Load() {
		t.Fatal("the old lease was not revoked between reading the slots and re-taking them")
	}
	// The rejoin is over: any revocation was asked for during it. The
	// pool replaces a revoked permit meanwhile, so only the 5 held across
	// are looked at.
	if n := f.asked.Load(); n != int64(stolen) {
		t.Fatalf("%d connections held through the lease's loss were revoked, want %d (those whose keys another member took)", n, stolen)
	}
	b.mu.Lock()
	lease := b.lease
	for _, p := range held {
		if o := b.owned[p.slot]; !steal[p.slot] && (p.cover != p.slot || o == nil || o.permit != p) {
			t.Errorf("the permit on slot %d is not backed by its own key after rejoining (cover %d)", p.slot, p.cover)
		}
	}
	b.mu.Unlock()
	for _, p := range held {
		r, err := admin.Get(ctx, k.slot(p.slot))
		if err != nil {
			t.Fatal(err)
		}
		want, wantLease := b.ID(), int64(lease)
		if steal[p.slot] {
			want, wantLease = "other", int64(other)
		}
		if len(r.Kvs) != 1 || string(r.Kvs[0].Value) != want || r.Kvs[0].Lease != wantLease {
			t.Errorf("slot key %d: %v, want %s under lease %x", p.slot, r.Kvs, want, wantLease)
		}
	}
}

// coveredOwn counts b's permits backed by the slot key of their own number.
func coveredOwn(b *Budget) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for p := range b.permits {
		if o := b.owned[p.slot]; p.cover == p.slot && o != nil && o.permit == p {
			n++
		}
	}
	return n
}

// cutLease is a client's Lease whose keep-alive streams the test can end,
// as the client ends one when etcd has not answered for a TTL; the lease
// lives on at the server until it expires or is revoked.
type cutLease struct {
	clientv3.Lease
	mu   sync.Mutex
	ends map[clientv3.LeaseID]context.CancelFunc
}

func (l *cutLease) KeepAlive(ctx context.Context, id clientv3.LeaseID) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	l.mu.Lock()
	if l.ends == nil {
		l.ends = map[clientv3.LeaseID]context.CancelFunc{}
	}
	l.ends[id] = cancel
	l.mu.Unlock()
	return l.Lease.KeepAlive(ctx, id)
}

// cut ends the keep-alive stream of lease id, closing its channel.
func (l *cutLease) cut(id clientv3.LeaseID) {
	l.mu.Lock()
	end := l.ends[id]
	l.mu.Unlock()
	if end != nil {
		end()
	}
}

// A member that booted on Min while etcd was away and finds, on joining,
// every slot taken is over budget: its share drops to the keys it owns,
// its surplus connections close as released, and it then grows into the
// slots the others give back; etcd never holds more than N keys.
func TestUnreachableAtStartOverBudget(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	watchSlots(t, admin, prefix, "db", 10)
	other := newFakePool(t, newBudget(t, addr, Options{Name: "db", Size: 10, Prefix: prefix}), 100)
	eventually(t, 2*time.Second, "the other member holds all 10", func() (bool, string) {
		return other.holding() == 10, fmt.Sprint(other.holding())
	})
	px := startProxy(t, addr)
	b, err := New(context.Background(), clientTo(t, px.ln.Addr().String()),
		Options{Name: "db", Size: 10, Min: 2, Prefix: prefix, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	f := newFakePool(t, b, 5)
	eventually(t, 2*time.Second, "running on Min 2", func() (bool, string) {
		return f.holding() == 2, fmt.Sprint(f.holding())
	})
	px.forward.Store(true)
	eventually(t, 10*time.Second, "5 each", func() (bool, string) {
		st := b.Status()
		return st.Online && f.holding() == 5 && other.holding() == 5,
			fmt.Sprintf("%+v holds %d; other holds %d", st, f.holding(), other.holding())
	})
	t.Logf("the late member dropped %d of its boot permits on joining", f.drops.Load())
}
