package shoaldebug

import "github.com/shoalpool/shoal/internal/namemask"

// maskName masks the passwords in a pool's or a budget's name, as
// Stats.String does: the page is read by whoever reaches it.
func maskName(name string) string { return namemask.Mask(name) }
