package shoaletcd

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// A rejoin against an etcd slow enough that its requests, each within its
// bound, take longer than the TTL between them must keep its new lease
// alive meanwhile: the keys it moved there count connections the member
// holds, and with that lease expired another member could take them while
// those connections stay open.
//
// The rejoin's requests are held by etcd's own clock: a shadow lease,
// granted with the same TTL right after the rejoin's and never renewed,
// tells how long the rejoin's would have left unrenewed. Its reads of the
// members and of the slots, and its first move of a key, are each held
// until the shadow has under a second left; its last read, after the
// moves, until etcd reports the shadow gone and the rejoin's lease either
// gone too or renewed. Right then another member tries to create each of
// the keys moved.
func TestSlowRejoinKeepsItsLease(t *testing.T) {
	var grants *shadowGrants
	// A TTL whose request bound leaves the last hold room for etcd's
	// revocation of an expired lease, which lags its expiry.
	m := newRejoinMember(t, rejoinSetup{permits: 5, ttl: 6 * time.Second, lease: func(l clientv3.Lease) clientv3.Lease {
		grants = &shadowGrants{Lease: l}
		return grants
	}})
	admin, k, ka, kv, b, f := m.admin, m.k, m.ka, m.kv, m.b, m.f

	ctx, other := m.otherMember(t, 30*time.Second)
	old, held := heldNow(b)
	// A hold ends short of the request's bound, or the request would fail
	// for the hold's sake rather than the lease's.
	bound := b.opts.opTimeout() - 300*time.Millisecond
	var lease, shadow clientv3.LeaseID
	var short []string // what went otherwise than the test needs
	nearlyOver := func(ctx context.Context) bool {
		ttl, _, err := leaseTTL(ctx, admin, shadow)
		return err == nil && ttl <= 0
	}
	st, steal := stealer(ctx, admin, k, other, held)
	kv.before(k.members(), func() {
		if lease, shadow = grants.last(); shadow == 0 {
			short = append(short, "no shadow lease was granted")
		}
		holdUntil(bound, nearlyOver)
		kv.before(k.slots(), func() {
			holdUntil(bound, nearlyOver)
			kv.beforeCommit(k.slots(), func(string) {
				if !holdUntil(bound, nearlyOver) {
					short = append(short, "the shadow lease had a second or more left before the moves")
				}
				kv.before(k.root, func() {
					if l, _ := grants.last(); l != lease {
						short = append(short, "the moves and the last read were in different attempts")
					}
					if !holdUntil(bound, func(ctx context.Context) bool {
						_, gone, err := leaseTTL(ctx, admin, shadow)
						if err != nil || !gone {
							return false
						}
						ttl, gone, err := leaseTTL(ctx, admin, lease)
						return err == nil && (gone || ttl >= 1)
					}) {
						short = append(short, "etcd did not report the shadow lease gone, and the rejoin's gone or renewed, before the last read")
					}
					steal()
				})
			})
		})
	})
	ka.cut(old)
	st.wait(t, b, "the rejoin did not reach its last read")
	if len(short) > 0 {
		t.Fatalf("with the rejoin's requests held for up to %v each: %s; the test needs otherwise", bound, strings.Join(short, "; "))
	}
	rejoinedFrom(t, b, old, 15*time.Second)
	if len(st.taken) > 0 || f.asked.Load() > 0 {
		t.Fatalf("after a rejoin whose requests took longer than the TTL between them, another member took the keys of slots %v and %d connections held through it were revoked; want none of either",
			st.taken, f.asked.Load())
	}
}

// The lease an attempt to rejoin kept, after it failed past moving the
// member's keys there, stays alive until the next attempt, however long
// the wait between them: at the smallest TTL, 2s, that wait reaches the
// TTL after four attempts in a row have failed. Before the fifth reads
// the slots, another member tries to create each of the keys.
//
// From the fourth attempt's failure, a shadow lease granted with the same
// TTL and never renewed tells by etcd's own clock how long the kept lease
// would have left unrenewed. The fifth attempt's renewal of the kept lease
// is held until etcd reports the shadow gone: the wait having reached the
// TTL, that covers only etcd's lag in revoking an expired lease.
func TestRejoinKeepsItsLeaseBetweenAttempts(t *testing.T) {
	var renew *renewHook
	m := newRejoinMember(t, rejoinSetup{permits: 5, ttl: 2 * time.Second, lease: func(l clientv3.Lease) clientv3.Lease {
		renew = &renewHook{Lease: l}
		return renew
	}})
	admin, k, ka, kv, b, f := m.admin, m.k, m.ka, m.kv, m.b, m.f

	ctx, other := m.otherMember(t, 20*time.Second)
	old, held := heldNow(b)
	st, steal := stealer(ctx, admin, k, other, held)
	var shadowErr error
	var short time.Duration // the bound of a hold that ran out
	// Each of the first four attempts fails at its last read, after its
	// moves; the fifth is held at its renewal of the kept lease, and
	// before its read of the slots.
	var failAt func(n int)
	failAt = func(n int) {
		kv.fail(k.root, func() {
			if n < 4 {
				failAt(n + 1)
				return
			}
			shadow, err := admin.Grant(ctx, b.opts.ttlSeconds())
			if err != nil {
				shadowErr = err
			} else {
				renew.arm(func(rctx context.Context) {
					// A hold ends short of the request's bound, or the
					// renewal would fail for the hold's sake.
					dl, _ := rctx.Deadline()
					bound := time.Until(dl) - 100*time.Millisecond
					if !holdUntil(bound, func(ctx context.Context) bool {
						_, gone, err := leaseTTL(ctx, admin, shadow.ID)
						return err == nil && gone
					}) {
						short = bound
					}
				})
			}
			kv.before(k.slots(), steal)
		})
	}
	failAt(1)
	ka.cut(old)
	st.wait(t, b, "the rejoin did not fail four times and try again")
	if shadowErr != nil {
		t.Fatalf("granting the shadow lease: %v", shadowErr)
	}
	if short > 0 {
		t.Fatalf("etcd did not report the shadow lease gone within %v of the fifth attempt's start; the test needs the wait between attempts to reach the TTL", short.Round(time.Millisecond))
	}
	rejoinedFrom(t, b, old, 10*time.Second)
	if len(st.taken) > 0 || f.asked.Load() > 0 {
		t.Fatalf("after four attempts to rejoin failed past moving their keys, another member took the keys of slots %v and %d connections held through it were revoked; want none of either",
			st.taken, f.asked.Load())
	}
}

// leaseTTL returns lease's remaining TTL as etcd reports it, in whole
// seconds rounded toward zero (so 0 also a while after it expired, until
// etcd revokes it), and whether etcd has it no longer.
func leaseTTL(ctx context.Context, c *clientv3.Client, lease clientv3.LeaseID) (int64, bool, error) {
	r, err := c.TimeToLive(ctx, lease)
	if err != nil {
		return 0, false, err
	}
	return r.TTL, r.TTL < 0 && r.GrantedTTL == 0, nil
}

// holdUntil polls cond every 10ms until it holds, for at most bound; it
// reports whether it held.
func holdUntil(bound time.Duration, cond func(context.Context) bool) bool {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	for {
		if cond(ctx) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// shadowGrants is a client's Lease that, right after each lease it grants,
// grants a shadow of it with the same TTL, never renewed: etcd reports the
// shadow gone only once the lease would be gone too, had nothing kept it
// alive.
type shadowGrants struct {
	clientv3.Lease
	mu            sync.Mutex
	lease, shadow clientv3.LeaseID
}

func (l *shadowGrants) Grant(ctx context.Context, ttl int64) (*clientv3.LeaseGrantResponse, error) {
	r, err := l.Lease.Grant(ctx, ttl)
	if err != nil {
		return r, err
	}
	s, err := l.Lease.Grant(ctx, ttl)
	l.mu.Lock()
	l.lease, l.shadow = r.ID, 0
	if err == nil {
		l.shadow = s.ID
	}
	l.mu.Unlock()
	return r, nil
}

// last returns the last lease granted and its shadow (0 if granting that
// failed).
func (l *shadowGrants) last() (lease, shadow clientv3.LeaseID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lease, l.shadow
}

// renewHook is a client's Lease that, once armed, runs a function with the
// request's context right before its next KeepAliveOnce: how a rejoin
// renews the lease an earlier attempt kept.
type renewHook struct {
	clientv3.Lease
	mu sync.Mutex
	fn func(context.Context)
}

func (l *renewHook) KeepAliveOnce(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseKeepAliveResponse, error) {
	l.mu.Lock()
	fn := l.fn
	l.fn = nil
	l.mu.Unlock()
	if fn != nil {
		fn(ctx)
	}
	return l.Lease.KeepAliveOnce(ctx, id)
}

// arm makes the next KeepAliveOnce run fn first.
func (l *renewHook) arm(fn func(context.Context)) {
	l.mu.Lock()
	l.fn = fn
	l.mu.Unlock()
}
