package fairshare

import "time"

// Divider is DividePools with a memory of its last division, for an owner
// that divides among the same pools at every sample: while no pool waits,
// a division whose inputs are those of the last one gives the same shares,
// so Divide skips it, and a sample of many idle pools costs a comparison
// per pool rather than a division. A Divider is not safe for concurrent
// use; its owner calls it under the lock it samples its pools under.
type Divider struct {
	calm bool      // the last division by demand left every pool its demand now: Rebalance did not run
	n    int       // what it divided
	rot  int       // the tie order's rotation (RotatedIDs)
	in   []poolKey // what each pool brought, in order, and its share after
}

// poolKey is what a division reads of a pool while none waits.
type poolKey struct{ min, demand, now, held, share int }

// key is what a division reads of p while no pool waits.
func (p *Pool) key() poolKey { return poolKey{p.Min, p.Demand, p.Now, p.Held, p.Share} }

// Divide divides n among ps as DividePools(n, ps, at, window, every) does,
// and reports whether a share changed. It skips the division, with the
// same outcome, when the last one through d left every pool at least its
// demand now and nothing it reads has changed since: n, the tie order's
// rotation, and each pool's Min, Demand, Now, Held and Share, in order.
// Divide, given the same claims, gives the same shares, which pool brings
// them makes no difference, and Need, Rebalance's input, is read only when
// a pool waits.
func (d *Divider) Divide(n int, ps []*Pool, at time.Time, window, every time.Duration) bool {
	rot := rotation(len(ps), at, max(window, time.Second))
	if d.same(n, ps, rot) {
		for _, p := range ps { // what DividePools writes when no pool waits
			if p.Now >= p.Share {
				p.fullAt = at
			}
			p.shortSince = time.Time{}
		}
		return false
	}
	changed, calm := dividePools(n, ps, at, window, every)
	d.calm, d.n, d.rot, d.in = calm, n, rot, d.in[:0]
	if calm {
		for _, p := range ps {
			d.in = append(d.in, p.key())
		}
	}
	return changed
}

// same reports whether a division of n among ps now would read what the
// last one read, and that one left every pool its demand.
func (d *Divider) same(n int, ps []*Pool, rot int) bool {
	if !d.calm || n != d.n || rot != d.rot || len(ps) != len(d.in) {
		return false
	}
	for i, p := range ps {
		if p.key() != d.in[i] {
			return false
		}
	}
	return true
}
