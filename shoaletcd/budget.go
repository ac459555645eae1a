package shoaletcd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Budget is one member's side of a connection budget kept in etcd. It is a
// shoal.Budget: give it to the pools of this process as their
// Config.Budget. They share the member's share among themselves (see
// Join); a process may also make a Budget per pool, each with the same Name
// and Size, and then each pool is a member of its own.
type Budget struct {
	client *clientv3.Client
	opts   Options
	keys   keys
	id     string
	host   string
	pid    int
	log    *slog.Logger

	ctx       context.Context // ends at Close; bounds every background request
	cancel    context.CancelFunc
	wg        sync.WaitGroup // the run loop and the share pusher
	kick      chan struct{}  // wakes the run loop: a slot to delete, a permit to cover
	shareKick chan struct{}  // wakes the share pusher
	ask       chan struct{}  // asks the share pusher for a division now (AskShare)

	// spare is set when the last division of the member's share among its
	// pools met every pool's demand and left one holding connections it
	// does not use: only then can an ask move one (see AskShare).
	spare atomic.Bool
	// asksServed counts the divisions made at once for an ask, for tests.
	asksServed atomic.Int64

	// shareMu orders SetShare calls, which are made without mu held so a
	// pool's SetShare may take its own locks. It is taken before mu.
	shareMu sync.Mutex

	mu          sync.Mutex
	closed      bool
	pools       []*seat // the pools this member serves, in join order (pools.go)
	joins       int     // pools ever joined: their default names
	left        bool    // every pool has left (after one joined): the member is out of the budget
	joined      bool    // joined etcd at least once; before that the budget runs on Min
	session     bool    // a lease is being kept alive
	lease       clientv3.LeaseID
	lastContact time.Time // of etcd's last answer
	opFailed    bool      // the last request to etcd failed
	published   int       // the demand in our member record
	pubPools    int       // the pools in our member record
	share       int       // fairshare.Divide's answer for this member
	view        view      // etcd's budget as the watch last showed it
	localRev    int64     // revision of our own last slot write
	owned       map[int]*ownedSlot
	pending     map[int]bool // slot keys being created
	overBudget  bool         // a permit without a key found no free one
	permits     map[*permit]struct{}
	slotUsers   map[int]int // slot number -> permits out with it
	avoid       map[int]time.Time
	// suspect holds the slots whose keys vanished with their holder's
	// lease (see noteVanishedLocked): the holder may be paused with its
	// connections open, so shoalpgx looks at the server before it dials
	// with one. A slot stops being suspect once its key is deleted alone.
	suspect map[int]bool
	changed chan struct{} // closed and replaced on every change Acquire may wait for

	// joining is the lease of an attempt to join that failed, kept for the
	// next attempt and revoked by Close: keys may have moved to it.
	// retiring is the old lease a rejoin is revoking, which Close revokes
	// if it cut that short. Both under mu.
	joining, retiring clientv3.LeaseID
	// joinAlive stops the keep-alive of the last attempt's lease (see
	// keepJoinAlive), under mu.
	joinAlive context.CancelFunc
}

// ownedSlot is a slot key this member holds under its lease.
type ownedSlot struct {
	permit   *permit // lent to this permit, nil when idle (kept for the next dial)
	deleting bool    // being given back
	rev      int64   // revision at which we wrote it
}

// memberRecord is the JSON a member keeps at NAME/members/ID.
type memberRecord struct {
	Host   string `json:"host"`
	PID    int    `json:"pid"`
	Label  string `json:"label,omitempty"`
	Min    int    `json:"min"`
	Demand int    `json:"demand"`
	// Pools is how many of its process's pools the member serves, so that
	// every pool can count the pools sharing the budget; nil in a record
	// that does not say, which counts as one. A member with no pool yet
	// says 0, which must not read as a record that does not say.
	Pools *int `json:"pools,omitempty"`
}

// poolCount is how many pools the record says its member serves, one if
// it does not say.
func (r memberRecord) poolCount() int {
	if r.Pools == nil {
		return 1
	}
	return *r.Pools
}

var _ shoal.Budget = (*Budget)(nil)

// New joins the budget opts.Name in etcd through client and returns this
// member's side of it. It returns an error for bad Options, for a Size
// that differs from the one in etcd while other members are alive
// (ErrSizeMismatch), when the minimums of the members would exceed
// Size (ErrMinimums), and when etcd refuses the member's requests
// (rpctypes.ErrPermissionDenied or ErrUserEmpty: the client's user has
// no role on Prefix, or it gives none to an etcd with auth enabled).
//
// An etcd that does not answer is not an error: a service must boot while
// etcd is down. New then logs a warning, starts the budget on its Min
// (permits granted locally, slot numbers taken from the top of the range
// so that shoalpgx's fence can catch a collision), and keeps trying in the
// background; once etcd answers, the member joins and takes slot keys for
// the connections it already holds (see the package doc). The first
// attempt takes at most a few seconds (half the TTL, at most 3s, per
// request) or until ctx ends; ctx is used for that attempt only. A ctx
// whose deadline passes first is an etcd that did not answer in time; a
// ctx canceled is the caller giving up, and New returns its error.
func New(ctx context.Context, client *clientv3.Client, opts Options) (*Budget, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if client == nil {
		return nil, errors.New("shoaletcd: New needs an etcd client")
	}
	host := hostName()
	b := &Budget{
		client:    client,
		opts:      opts,
		keys:      newKeys(opts.Prefix, opts.Name),
		id:        memberID(host),
		host:      host,
		pid:       os.Getpid(),
		log:       opts.Logger.With("budget", opts.Name),
		kick:      make(chan struct{}, 1),
		shareKick: make(chan struct{}, 1),
		ask:       make(chan struct{}, 1),
		owned:     map[int]*ownedSlot{},
		pending:   map[int]bool{},
		permits:   map[*permit]struct{}{},
		slotUsers: map[int]int{},
		avoid:     map[int]time.Time{},
		suspect:   map[int]bool{},
		changed:   make(chan struct{}),
		share:     opts.Min,
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())

	s, err := b.join(ctx, false)
	if err != nil {
		// A deadline the caller set for the start is no reason to fail
		// it: the service must start while etcd is slow or away.
		if operatorsToFix(err) || errors.Is(ctx.Err(), context.Canceled) {
			b.cancel()
			if b.joining != 0 {
				b.revoke(b.joining)
			}
			return nil, err
		}
		b.log.Warn("shoaletcd: etcd does not answer; starting on this member's minimum share and joining when it does",
			"min", opts.Min, "size", opts.Size, "err", err)
	}
	b.wg.Add(2)
	go b.run(s)
	go b.pushShares()
	return b, nil
}

// operatorsToFix reports whether err is etcd's answer that no retry
// changes: a Size or minimums the other members disagree with, or a
// request refused for the client's user. New returns it rather than start
// the member on Min, uncounted in etcd, and the run loop logs it as an
// error each time it changes.
func operatorsToFix(err error) bool {
	return errors.Is(err, ErrSizeMismatch) || errors.Is(err, ErrMinimums) ||
		errors.Is(err, rpctypes.ErrPermissionDenied) || errors.Is(err, rpctypes.ErrUserEmpty)
}

// memberID names this member uniquely: host, pid and a random suffix, so
// two Budgets in one process (or a restarted process with a reused pid)
// never take each other's keys for their own.
func memberID(host string) string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(r[:]))
}

// Close stops the budget and revokes its lease (and those a rejoin left
// to it), which deletes its member record and every slot key it holds at
// once, so the others may grow without waiting out the TTL. Close the
// pools first: a connection still open then is no longer counted in
// etcd, and the other members may open one in its place. Close tells such
// pools their share is 0, so that they close their idle connections at
// once and the rest as they are released, and returns an error that says
// how many were open; their permits become no-ops. Close also returns the
// error of the revocation, if etcd did not answer (the lease then expires
// within the TTL); it waits on etcd for one request's bound at most. A
// second Close returns nil.
func (b *Budget) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	open, pools := len(b.permits), len(b.pools)
	b.broadcastLocked()
	b.mu.Unlock()
	b.cancel()
	b.wg.Wait()
	// The share pusher has stopped; closed, the budget divides 0.
	b.pushShare()

	var errs []error
	if open > 0 {
		errs = append(errs, fmt.Errorf("shoaletcd: budget %q closed with %d connection(s) of its %d pool(s) still open: etcd counts them no more, and other members may open as many beyond its size; close the pools before their budget",
			b.opts.Name, open, pools))
	}
	// Revoked even when the session looked lost: the lease may yet be alive
	// at the server, holding keys until it expires. So are the lease of an
	// attempt to join that failed and an old one a rejoin was revoking.
	// All within one request's bound.
	b.mu.Lock()
	leases := []clientv3.LeaseID{b.lease, b.joining, b.retiring}
	b.session = false
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), b.opts.opTimeout())
	defer cancel()
	for _, lease := range leases {
		if lease == 0 {
			continue
		}
		if _, err := b.client.Revoke(ctx, lease); err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
			errs = append(errs, fmt.Errorf("shoaletcd: budget %q: revoking lease %x (it expires within %v): %w", b.opts.Name, int64(lease), b.opts.TTL, err))
		}
	}
	return errors.Join(errs...)
}

// Name returns the budget's name.
func (b *Budget) Name() string { return b.opts.Name }

// ID returns this member's ID, as Read shows it.
func (b *Budget) ID() string { return b.id }

// FenceKey returns a 32-bit key derived from Prefix and Name, the same in
// every member: shoalpgx takes pg_try_advisory_lock(FenceKey(), slot) on
// each connection so that a slot counted twice is caught at the server.
func (b *Budget) FenceKey() int32 { return fenceKey(b.opts.Prefix, b.opts.Name) }

// Members returns how many members this member sees in the budget now,
// itself included while it is in (not after its last pool has left), or
// 0 while it has not joined etcd yet: processes, as Status reports them
// (a pool's Stats.BudgetMembers counts pools, through Pools).
func (b *Budget) Members() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.joined {
		return 0
	}
	n := len(b.view.members)
	// Its own record counts as the watch shows it, except that a member
	// counts itself as soon as it is in, and no more once it has left,
	// whether or not the watch has caught up with its record.
	_, seen := b.view.members[b.id]
	switch in := b.session && !b.left; {
	case in && !seen:
		n++
	case b.left && seen:
		n--
	}
	return n
}

// Pools returns how many pools share the budget now, as far as this member
// sees: its own, while it is in, and those of every other member (one for
// a member whose record does not say). The pool's Stats.BudgetMembers
// reads it through interface{ Pools() int }, so that it counts pools, as
// it does under a shoal.LocalBudget, rather than processes.
func (b *Budget) Pools() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	if !b.left {
		n = len(b.pools)
	}
	if !b.joined {
		return n
	}
	for id, r := range b.view.members {
		if id != b.id {
			n += r.poolCount()
		}
	}
	return n
}

// Status is one member's view of its budget, for metrics.
type Status struct {
	Share   int  // connections this member's pools may hold now, between them
	Fair    int  // this member's max-min share of the budget
	Demand  int  // the smoothed demand this member publishes
	Held    int  // slots owned, lent or idle, plus permits not yet backed by a slot
	InUse   int  // permits out
	Members int  // members seen, as Members returns
	Joined  bool // joined etcd at least once
	Online  bool // etcd answers now
	// Pools is each pool's part of Share, in the order they joined.
	Pools []PoolStatus
}

// Status returns this member's view of the budget now. It only reads:
// each pool's Share is what SetShare was told last, not a division made
// for the asking (dividing moves the pools' grace timers and rotation, so
// a metrics scrape would change the division it reports).
func (b *Budget) Status() Status {
	n := b.Members()
	b.mu.Lock()
	defer b.mu.Unlock()
	pools := make([]PoolStatus, len(b.pools))
	for i, s := range b.pools {
		pools[i] = PoolStatus{Name: s.name, Min: s.part.Min, Demand: s.part.Demand, Share: max(s.pushed, 0), Held: s.held}
	}
	return Status{
		Pools:   pools,
		Share:   b.poolShareLocked(),
		Fair:    b.share,
		Demand:  b.published,
		Held:    b.heldLocked(),
		InUse:   len(b.permits),
		Members: n,
		Joined:  b.joined,
		Online:  b.onlineLocked(time.Now()),
	}
}

// broadcastLocked wakes every Acquire waiting for a change.
func (b *Budget) broadcastLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// wake pokes the run loop and the share pusher without blocking.
func (b *Budget) wake() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
	b.kickShare()
}

// kickShare wakes the goroutine that tells the pool its share.
func (b *Budget) kickShare() {
	select {
	case b.shareKick <- struct{}{}:
	default:
	}
}
