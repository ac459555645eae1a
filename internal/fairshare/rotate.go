package fairshare

import (
	"fmt"
	"time"
)

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
	rot := int(now.UnixNano() / int64(max(every, 1)) % int64(n))
	for i := range ids {
		ids[i] = fmt.Sprintf("%012d", (i-rot+n)%n)
	}
	return ids
}
