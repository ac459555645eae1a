package shoaletcd

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/shoalpool/shoal/internal/etcdtest"
)

// rejoinMember is a budget member set up for a rejoin test, with the
// test's handles on it.
type rejoinMember struct {
	admin  *clientv3.Client // the test's own client, to play other members
	prefix string
	k      keys
	ka     *cutLease // ends the member's keep-alive streams
	kv     *faultKV  // steers the member's reads and writes
	b      *Budget
	f      *fakePool
}

// rejoinSetup is what differs between the rejoin tests' members.
type rejoinSetup struct {
	permits int           // held by the member's pool, each on its own key
	ttl     time.Duration // the member's TTL; 0 for the default
	// lease, if set, wraps the member's Lease around ka.
	lease func(clientv3.Lease) clientv3.Lease
	// unwatched leaves out the watch that fails the test if the budget
	// ever has more slot keys than its size.
	unwatched bool
}

// newRejoinMember starts a member of budget "db" of size 10 under a prefix
// of the test's own, and waits until its pool holds s.permits permits,
// each on the slot key of its own number.
func newRejoinMember(t *testing.T, s rejoinSetup) *rejoinMember {
	t.Helper()
	addr := etcdtest.SharedAddr(t)
	m := &rejoinMember{admin: newClient(t, addr)}
	m.prefix = testPrefix(t, m.admin)
	m.k = newKeys(m.prefix, "db")
	if !s.unwatched {
		watchSlots(t, m.admin, m.prefix, "db", 10)
	}
	c := newClient(t, addr)
	m.ka = &cutLease{Lease: c.Lease}
	m.kv = &faultKV{KV: c.KV}
	c.Lease, c.KV = m.ka, m.kv
	if s.lease != nil {
		c.Lease = s.lease(m.ka)
	}
	b, err := New(context.Background(), c, Options{Name: "db", Size: 10, TTL: s.ttl, Prefix: m.prefix, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	m.b, m.f = b, newFakePool(t, b, s.permits)
	eventually(t, 5*time.Second, fmt.Sprintf("%d permits, each on its own slot key", s.permits), func() (bool, string) {
		return m.f.holding() == s.permits && coveredOwn(b) == s.permits, debugState(b)
	})
	return m
}

// otherMember returns a ctx for the test's own requests and a lease for it
// to play another member under, both lasting d: the lease outlives the
// test's part, so whatever the other member creates stays while the test
// looks.
func (m *rejoinMember) otherMember(t *testing.T, d time.Duration) (context.Context, clientv3.LeaseID) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	l, err := m.admin.Grant(ctx, int64(d/time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return ctx, l.ID
}
