package shoalgrpc

import "github.com/shoalpool/shoal"

// markPermanent marks err as one that no retry can mend (shoal.Permanent):
// the core pool then fails the calls waiting for a connection at once and
// tries again every few seconds instead of four times a second.
func markPermanent(err error) error { return shoal.Permanent(err) }
