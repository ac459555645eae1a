package fairshare

import "sort"

// Claim is what one member asks of a budget.
type Claim struct {
	ID     string // orders ties: the lower ID wins a remainder
	Min    int    // granted first, even when the member is idle
	Demand int    // connections the member would use now
	// Held is the connections the member holds now, where its budget
	// knows them (the pools of one process): what is left once every
	// demand is met keeps them first (see Divide). 0 where it is not
	// known, as between shoaletcd's members.
	Held int
}

// Divide divides n connections among claims by max-min fairness and
// returns each claim's share, in the order of claims. It is deterministic
// whatever the order of claims (ties go to the lower ID), so members that
// each run it on the same list agree on everybody's share.
//
// Every minimum is granted first (in ID order while n lasts, should the
// minimums not fit). The rest is water-filled up to each demand: the level
// rises until n is used, so nobody gets more than another unless the other
// has all it asks for. What is left once every demand is met goes first to
// the members holding more than that (Held), water-filled up to what each
// holds, so that a member whose demand fell keeps the connections it has
// open while nobody else asks for them, rather than close them at once
// and dial them again at its next burst; the rest is water-filled again
// without caps, so the shares always sum to n: an idle member holds
// headroom it gives up at the next change, and a burst is served from it
// at once instead of after a round of recomputation.
func Divide(n int, claims []Claim) []int {
	order := idOrder(claims)

	lo := make([]int, len(claims)) // in ID order
	hi := make([]int, len(claims))
	sumMin := 0
	for j, i := range order {
		c := claims[i]
		lo[j] = max(c.Min, 0)
		hi[j] = max(lo[j], c.Demand)
		sumMin += lo[j]
	}
	var alloc []int
	if sumMin >= n {
		// Not even the minimums fit (budgets refuse that when a member
		// joins, but one may rejoin late): hand them out in ID order.
		alloc = make([]int, len(claims))
		left := max(n, 0)
		for j := range lo {
			alloc[j] = min(lo[j], left)
			left -= alloc[j]
		}
	} else {
		alloc = waterFill(n, lo, hi)
		if Sum(alloc) < n {
			kept := make([]int, len(claims))
			for j, i := range order {
				kept[j] = max(alloc[j], claims[i].Held)
			}
			alloc = waterFill(n, alloc, kept)
		}
		if used := Sum(alloc); used < n && len(claims) > 0 {
			unbounded := make([]int, len(claims))
			for j := range unbounded {
				unbounded[j] = n
			}
			alloc = waterFill(n, alloc, unbounded)
		}
	}
	shares := make([]int, len(claims))
	for j, i := range order {
		shares[i] = alloc[j]
	}
	return shares
}

// idOrder returns the indexes of claims in ID order. A LocalBudget's
// claims come as a rotation of that order (RotatedIDs), which it finds
// without a sort when the IDs are distinct.
func idOrder(claims []Claim) []int {
	order := make([]int, len(claims))
	start, descents := 0, 0
	for i := 1; i < len(claims); i++ {
		if claims[i].ID < claims[i-1].ID {
			start = i
			descents++
		} else if claims[i].ID == claims[i-1].ID {
			descents = 2 // a tie: the sort's order
		}
	}
	if n := len(claims); descents == 0 || descents == 1 && claims[n-1].ID < claims[0].ID {
		for j := range order {
			order[j] = (start + j) % n
		}
		return order
	}
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return claims[order[a]].ID < claims[order[b]].ID })
	return order
}

// waterFill returns a[j] = clamp(L, lo[j], hi[j]) for the highest level L
// at which the sum stays within n, then gives what is left of n one each,
// in index order, to those the next level would raise. It needs
// sum(lo) <= n; the result sums to min(n, sum(hi)).
func waterFill(n int, lo, hi []int) []int {
	at := func(j, level int) int { return min(max(level, lo[j]), hi[j]) } // j's at level
	sumAt := func(level int) int {
		s := 0
		for j := range lo {
			s += at(j, level)
		}
		return s
	}
	top := 0
	for _, h := range hi {
		top = max(top, h)
	}
	// The highest level whose allocation fits: sumAt only grows with
	// level, so a binary search finds it.
	low, high := 0, top
	for low < high {
		mid := (low + high + 1) / 2
		if sumAt(mid) <= n {
			low = mid
		} else {
			high = mid - 1
		}
	}
	a := make([]int, len(lo))
	left := n
	for j := range a {
		a[j] = at(j, low)
		left -= a[j]
	}
	for j := range a {
		if left == 0 {
			break
		}
		if a[j] == low && low < hi[j] { // the next level raises j
			a[j]++
			left--
		}
	}
	return a
}

// Sum adds up a, a list of shares.
func Sum(a []int) int {
	s := 0
	for _, v := range a {
		s += v
	}
	return s
}
