package shoaletcd

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/etcdtest"
	"github.com/shoalpool/shoal/internal/fairshare"
)

// idleMember is a pool that joins a Budget and never acquires: its demand
// is what the test sets, and it records the share it was told.
type idleMember struct {
	demand, share atomic.Int64
}

func (m *idleMember) Demand() int    { return int(m.demand.Load()) }
func (m *idleMember) SetShare(n int) { m.share.Store(int64(n)) }

// divisionOf describes each pool's share and grace timers, as the member's
// next division would start from them.
func divisionOf(b *Budget) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := ""
	for _, p := range b.pools {
		s += fmt.Sprintf("%s share %d pushed %d %+v; ", p.name, p.part.Share, p.pushed, p.part)
	}
	return s
}

// Status only reads: called again and again while the member's division
// is due to change, it reports what each pool's SetShare was told, and
// leaves the division, its grace timers and its order as they were.
func TestStatusChangesNothing(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	b := newBudget(t, addr, Options{Name: "db", Size: 8, Prefix: prefix, IdleTime: 200 * time.Millisecond})
	var a, c idleMember
	for _, m := range []*idleMember{&a, &c} {
		leave, err := b.Join(m)
		if err != nil {
			t.Fatal(err)
		}
		defer leave()
	}
	eventually(t, 5*time.Second, "the member joined etcd", func() (bool, string) {
		st := b.Status()
		return st.Joined && st.Share > 0, fmt.Sprintf("%+v", st)
	})
	// Hold shareMu: the member's own division waits for it, so only
	// Status could divide from here on. a's demand rises, sampled here.
	b.shareMu.Lock()
	defer b.shareMu.Unlock()
	a.demand.Store(8)
	b.samplePools(time.Now(), true)
	// A division now would change a share: copies of the pools say so.
	b.mu.Lock()
	parts := make([]*fairshare.Pool, len(b.pools))
	for i, s := range b.pools {
		cp := s.part
		parts[i] = &cp
	}
	due := fairshare.DividePools(b.poolShareLocked(), parts, time.Now(), b.opts.IdleTime, tickEvery)
	b.mu.Unlock()
	if !due {
		t.Fatalf("the division is not due to change, so the test shows nothing: %s", divisionOf(b))
	}
	before := divisionOf(b)
	for range 20 {
		st := b.Status()
		for i, m := range []*idleMember{&a, &c} {
			if got, told := st.Pools[i].Share, int(m.share.Load()); got != told {
				t.Fatalf("Status reports %s's share %d, SetShare was told %d", st.Pools[i].Name, got, told)
			}
		}
	}
	if after := divisionOf(b); after != before {
		t.Fatalf("Status changed the division:\nbefore %s\nafter  %s", before, after)
	}
}
