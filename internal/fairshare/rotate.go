package fairshare

import "time"

// RotatedIDs returns Claim IDs for n members listed in a fixed order (the
// order they joined) whose ties go round: within each period of length
// every the first in line is a different member, the next after the last
// period's. Divide gives the connections that do not divide evenly to the
// lowest IDs; among processes that is a connection or so, but when more
// members want connections than there are (tenants of one process under a
// small cap), a fixed order would let the same members hold the remainder
// while the others wait for ever. Members that compute shares each for
// themselves (shoaletcd's) must not use it: their clocks differ.
func RotatedIDs(n int, now time.Time, every time.Duration) []string {
	ids := make([]string, n)
	if n == 0 {
		return ids
	}
	rot := rotation(n, now, every)
	// One string for all, sliced: a LocalBudget makes these at every
	// division, for every pool.
	const width = 12
	buf := make([]byte, n*width)
	for i := range ids {
		v := (i - rot + n) % n
		for j := (i+1)*width - 1; j >= i*width; j-- { // %012d
			buf[j] = byte('0' + v%10)
			v /= 10
		}
	}
	all := string(buf)
	for i := range ids {
		ids[i] = all[i*width : (i+1)*width]
	}
	return ids
}

// rotation is how far RotatedIDs turns the order of n members at now:
// the IDs depend on nothing else.
func rotation(n int, now time.Time, every time.Duration) int {
	if n == 0 {
		return 0
	}
	return int(now.UnixNano() / int64(max(every, 1)) % int64(n))
}
