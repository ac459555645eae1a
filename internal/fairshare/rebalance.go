package fairshare

import (
	"sort"
	"time"
)

// Holder is one member's state for Rebalance.
type Holder struct {
	ID    string // orders ties, as Claim.ID
	Min   int    // its minimum share, never taken
	Share int    // its share now
	Now   int    // its demand now: connections held for callers plus callers waiting
	// Held is the connections it holds (Pool.Held): one holding its whole
	// demand waits for nothing and is never short, whatever its share.
	Held int
	// Need is what it needs on average, without the headroom fair spreads
	// beyond the claims: idle connections above it may move.
	Need int
	// ShortSince is when it began to want more than its share gives it
	// (zero while it does not): the member short the longest is served
	// first.
	ShortSince time.Time
	// Overdue reports that it has been short for the grace period: it may
	// now take connections that are in use, closed as they are released.
	Overdue bool
	// FullAt is the last time its demand reached its share: connections
	// are taken first from the member that last used all of them longest
	// ago.
	FullAt time.Time
}

// Rebalance moves shares toward fair (a Divide by need, which sums to n)
// in as few connections as it can, for when members wait: every
// connection moved is a close and a dial, which under a load that always
// has someone waiting (more members busy than n holds) would otherwise cost
// more than the queries it serves. A member keeps its share unless another
// needs it:
//
//   - A member is short by Want (what it waits for within its fair share,
//     at least one connection, at least its minimum) less its share,
//     while its demand is more than it holds: one holding its leases,
//     none waiting, is not short, though its share fell below them.
//   - Shares not given out serve the short members first, the one short
//     the longest first.
//   - Then members give what they hold idle above what they need and
//     their demand now (Share above max(min(fair, Need), Now, Min)): the
//     one whose demand last filled its share longest ago first.
//     Connections idle move at once.
//   - Only a member short for the grace period (Overdue) takes connections
//     in use: from members above their fair share, the furthest above
//     first, down to their fair share; and, should that leave it with
//     none (more members want a connection than there are), one from the
//     member holding the most above its minimum, ties going to the lower
//     ID. A member waits a little for a connection to come free rather
//     than force one closed, and none waits for ever.
//
// A member below its minimum (one that has just joined, or whose minimum
// grew back) is first brought up to it, from connections in use if need
// be and with no grace: minimums are granted first, whatever the others
// want. What no short member needs stays where it is. The result sums to n
// when fair does, and keeps every member at or above its minimum while the
// minimums fit in n.
func Rebalance(n int, hs []Holder, fair []int) []int {
	shares := make([]int, len(hs))
	want := make([]int, len(hs))
	used := 0
	for i, h := range hs {
		shares[i] = max(h.Share, 0)
		want[i] = Want(h.Min, fair[i], h.Now)
		used += shares[i]
	}
	// Shares above n (n shrank: a shoaletcd member's share): take the
	// excess from the members furthest above fair, then, fair being the
	// larger of two divisions and so able to sum above n, from the
	// furthest above their minimums.
	if used > n {
		over := byKey(hs, func(a, b int) bool { return shares[a]-fair[a] > shares[b]-fair[b] })
		for _, j := range over {
			take := min(used-n, max(shares[j]-fair[j], 0))
			shares[j] -= take
			used -= take
		}
		for used > n {
			most := -1
			for j := range hs {
				if shares[j] > hs[j].Min && (most < 0 || shares[j]-hs[j].Min > shares[most]-hs[most].Min) {
					most = j
				}
			}
			if most < 0 {
				break // the minimums alone are above n
			}
			shares[most]--
			used--
		}
	}
	free := max(n-used, 0)
	free = raiseToMinimums(hs, fair, shares, free)
	short := []int{}
	for i, h := range hs {
		if shares[i] < want[i] && h.Now > h.Held {
			short = append(short, i)
		}
	}
	sort.SliceStable(short, func(a, b int) bool {
		x, y := hs[short[a]], hs[short[b]]
		if !x.ShortSince.Equal(y.ShortSince) {
			return x.ShortSince.Before(y.ShortSince)
		}
		return x.ID < y.ID
	})
	idle := byKey(hs, func(a, b int) bool {
		if !hs[a].FullAt.Equal(hs[b].FullAt) {
			return hs[a].FullAt.Before(hs[b].FullAt)
		}
		return hs[a].Share > hs[b].Share
	})
	busy := byKey(hs, func(a, b int) bool { return shares[a]-fair[a] > shares[b]-fair[b] })
	for _, k := range short {
		need := want[k] - shares[k]
		take := min(need, free)
		free -= take
		need -= take
		shares[k] += take
		for _, j := range idle {
			if need == 0 {
				break
			}
			if j == k {
				continue
			}
			give := min(need, max(shares[j]-max(min(fair[j], hs[j].Need), hs[j].Now, hs[j].Min), 0))
			shares[j] -= give
			shares[k] += give
			need -= give
		}
		if need == 0 || !hs[k].Overdue {
			continue
		}
		for _, j := range busy {
			if need == 0 {
				break
			}
			if j == k {
				continue
			}
			give := min(need, max(shares[j]-max(fair[j], hs[j].Min), 0))
			shares[j] -= give
			shares[k] += give
			need -= give
		}
		if shares[k] > 0 {
			continue
		}
		// Still nothing, and every connection within somebody's fair
		// share: more members want one than there are. Take one from the
		// member holding the most above its minimum (ties by ID, which
		// the caller rotates), so that connections go round.
		if most := mostAboveMin(hs, shares, k); most >= 0 {
			shares[most]--
			shares[k]++
		}
	}
	// What nobody short took goes to the members below their fair share
	// (there is enough for all of them: the fair shares sum to n), so that
	// a burst finds its connection at once.
	for i := range hs {
		give := min(free, max(fair[i]-shares[i], 0))
		shares[i] += give
		free -= give
	}
	return shares
}

// Want is what a member short of connections is brought up to: what it
// waits for, within its fair share, and at least one connection (whatever
// its fair share, so that no member waits for ever) and its minimum.
func Want(minimum, fair, now int) int { return max(minimum, min(max(fair, 1), now)) }

// byKey returns the indexes of hs sorted by less.
func byKey(hs []Holder, less func(a, b int) bool) []int {
	idx := make([]int, len(hs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return less(idx[a], idx[b]) })
	return idx
}

// raiseToMinimums brings each member whose share is below its minimum up
// to it and returns what is left of free: from free first, then from the
// members above their fair share (down to it), then from those above
// their minimum, the most above first (ties by ID, which the caller
// rotates). A minimum is granted whatever the others use, as a Divide
// grants it; without this a member that joined with a share of 0 would
// wait out the grace like any member short of connections.
func raiseToMinimums(hs []Holder, fair, shares []int, free int) int {
	for k, h := range hs {
		lack := h.Min - shares[k]
		if lack <= 0 {
			continue
		}
		take := min(lack, free)
		free -= take
		shares[k] += take
		lack -= take
		for _, j := range byKey(hs, func(a, b int) bool { return shares[a]-fair[a] > shares[b]-fair[b] }) {
			if lack == 0 {
				break
			}
			if j == k {
				continue
			}
			give := min(lack, max(shares[j]-max(fair[j], hs[j].Min), 0))
			shares[j] -= give
			shares[k] += give
			lack -= give
		}
		for lack > 0 {
			most := mostAboveMin(hs, shares, k)
			if most < 0 {
				break // the minimums do not fit in n
			}
			shares[most]--
			shares[k]++
			lack--
		}
	}
	return free
}

// mostAboveMin returns the member other than k holding the most above its
// minimum, ties by ID (which the caller rotates), or -1 when none holds
// more than its minimum.
func mostAboveMin(hs []Holder, shares []int, k int) int {
	most := -1
	for _, j := range byKey(hs, func(a, b int) bool { return hs[a].ID < hs[b].ID }) {
		if j != k && shares[j] > hs[j].Min && (most < 0 || shares[j]-hs[j].Min > shares[most]-hs[most].Min) {
			most = j
		}
	}
	return most
}
