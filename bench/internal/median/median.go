// Package median is the one median every bench program reports, so that a
// figure called the median means the same in all of their tables.
package median

import "slices"

// Of returns the median of xs: the middle value, or the mean of the middle
// two for an even count; 0 for none. xs is left as it was.
func Of[T ~int | ~int64 | ~float64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return s[mid-1] + (s[mid]-s[mid-1])/2
}
