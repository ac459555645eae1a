package namemask

import "strings"

// Suffixed is the name of a pool derived from the pool named name, such as
// its read pool ("orders/reads"): name with suffix after it, which Mask
// keeps. A name whose last word is a bare password value ("orders
// password=pw") would otherwise lend it the suffix, masked with it, and
// the derived pool would show its parent's name; a space, which ends a
// bare value, then goes between the two. A name read whole as a URL whose
// last parameter is a password ("postgres://db/x?password=pw") takes in
// a space and what follows too; an '&', which ends a parameter, goes
// between them there. A name that ends in a password keyword with no
// value ("orders token=") takes the next word as the value, whatever
// separates them; an empty quoted value, which ends there, goes between.
func Suffixed(name, suffix string) string {
	for _, sep := range []string{"", " ", "&", "''"} {
		if joined := name + sep + suffix; strings.HasSuffix(Mask(joined), suffix) {
			return joined
		}
	}
	return name + " " + suffix
}
