package fairshare

import (
	"math"
	"time"
)

// Pool is one pool's part in a division among the pools of one process: a
// LocalBudget's pools, or the pools of one shoaletcd member, which divide
// the member's share. Its owner samples it (Sample) and divides among all
// (DividePools) under its own lock; a Pool is not safe for concurrent use.
type Pool struct {
	Min    int      // granted first
	Smooth Smoother // its demand's hysteresis; the owner sets Window
	Demand int      // its demand smoothed: the highest of the last Window
	Now    int      // its demand last sampled, unsmoothed
	Need   Need     // what it needs while pools wait
	Share  int      // its share, as DividePools last set it
	Held   int      // the connections it holds, set by its owner before DividePools (Claim.Held)

	shortSince time.Time // when it began to wait beyond its share while others waited; zero while it does not
	fullAt     time.Time // the last division at which its demand reached its share
}

// Sample records the pool's connections serving leases (busy) and its
// demand (busy plus those its callers wait for) at at; every is how often
// the owner samples.
func (p *Pool) Sample(at time.Time, busy, demand int, every time.Duration) {
	p.Look(at, demand)
	p.Need.Add(busy, demand, p.Smooth.Window, every)
}

// Look records the pool's demand at at between two of its owner's regular
// samples, as Sample does but leaving Need, an average over the regular
// samples, alone: for a division made at once because a pool waits.
func (p *Pool) Look(at time.Time, demand int) {
	p.Demand, p.Now = p.Smooth.Add(at, demand), demand
}

// Grace is how long DividePools lets a pool wait short of its fair share
// before it takes busy connections from another: window/8, at least every.
// A pool's owner, and its tests, read the grace here rather than restate it.
func Grace(window, every time.Duration) time.Duration { return max(window/8, every) }

// DividePools divides n among ps and sets each one's Share, reporting
// whether one changed. window is the pools' IdleTime, every how often they
// are sampled.
//
// Divide divides by the smoothed demands, with the tie order going round
// (RotatedIDs, every window and at least a second: among many pools of one
// process more may want connections than there are, and a fixed order
// would starve the last). When a pool waits for more than that gives it,
// the shares move toward the division by need instead (the larger of the
// two for each pool), but only as far as the pools that wait need, idle
// connections first and busy ones after Grace(window, every) (Rebalance):
// moving a connection is a close and a dial, and a load with more pools
// busy than n holds always has one waiting.
func DividePools(n int, ps []*Pool, at time.Time, window, every time.Duration) bool {
	changed, _ := dividePools(n, ps, at, window, every)
	return changed
}

// dividePools is DividePools, reporting also whether the division by
// demand left every pool its demand now (calm), so that neither Rebalance
// nor Need had a say: Divider's test for a division it may skip.
func dividePools(n int, ps []*Pool, at time.Time, window, every time.Duration) (changed, calm bool) {
	ids := RotatedIDs(len(ps), at, max(window, time.Second))
	claims := make([]Claim, len(ps))
	for i, p := range ps {
		claims[i] = Claim{ID: ids[i], Min: p.Min, Demand: p.Demand, Held: p.Held}
	}
	shares := Divide(n, claims)
	var fair []int // what is fair while some pool waits
	for i, p := range ps {
		if shares[i] < p.Now {
			needs := make([]Claim, len(ps))
			for j, o := range ps {
				needs[j] = Claim{ID: ids[j], Min: o.Min, Demand: o.Need.Value()}
			}
			// Need follows a rise over window, demand at once.
			fair = Divide(n, needs)
			for j := range fair {
				fair[j] = max(fair[j], shares[j])
			}
			break
		}
	}
	if fair != nil {
		grace := Grace(window, every)
		hs := make([]Holder, len(ps))
		for i, p := range ps {
			hs[i] = Holder{
				ID: ids[i], Min: p.Min, Share: p.Share, Now: p.Now, Held: p.Held, Need: p.Need.Value(),
				ShortSince: p.shortSince, FullAt: p.fullAt,
				Overdue: !p.shortSince.IsZero() && at.Sub(p.shortSince) >= grace,
			}
		}
		shares = Rebalance(n, hs, fair)
	}
	for i, p := range ps {
		if p.Now >= p.Share {
			p.fullAt = at
		}
		switch {
		case fair == nil || !p.waits() || shares[i] >= Want(p.Min, fair[i], p.Now):
			p.shortSince = time.Time{}
		case p.shortSince.IsZero():
			p.shortSince = at
		}
		if p.Share != shares[i] {
			p.Share, changed = shares[i], true
		}
	}
	return changed, fair == nil
}

// waits reports whether the pool's demand is more than the connections it
// holds: callers of it wait. A pool that holds its whole demand (its
// leases) waits for nothing, whatever its share: a share below what it
// holds closes the rest as they are released, and taking a share back
// for it would take it from a pool that does wait, a grace later, and
// back again a grace after that.
func (p *Pool) waits() bool { return p.Now > p.Held }

// Need is what a pool needs of the budget while pools wait: the
// connections serving its leases, plus as many again while callers wait
// beyond them, averaged over the budget's IdleTime.
//
// Not its demand (leases plus every caller waiting): when callers pick a
// pool each and wait on whichever they picked, as requests for many
// tenants do, a pool short of connections gathers waiters and so looks the
// hungriest; shares divided by demand then follow the starved, every
// pool's demand looks alike, and connections go round the pools at a close
// and a dial each. The connections in use measure what a pool gets done,
// whatever waits; counting them twice while callers wait lets a pool that
// is short double its need each time it fills what it has, until none
// waits. A pool with no connection and callers waiting needs none on
// average: Rebalance gives one to whoever waits.
type Need struct {
	avg float64
}

// Add folds in one sample of a pool's busy connections and its demand, as
// an exponential average whose time constant is window, sampled every
// every (each sample weighs every/window; a window no longer than every
// follows each sample).
func (n *Need) Add(busy, demand int, window, every time.Duration) {
	v := float64(busy + min(max(demand-busy, 0), busy))
	w := 1.0
	if window > every {
		w = float64(every) / float64(window)
	}
	n.avg += (v - n.avg) * w
}

// Value is the average rounded to connections.
func (n *Need) Value() int { return int(math.Round(n.avg)) }
