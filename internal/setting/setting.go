// Package setting holds the one convention the adapters' options share: a
// zero field takes the default, and a negative one turns the setting off,
// which the core spells as zero.
package setting

// Or returns def when v is zero, zero (off, as the core reads it) when v is
// negative, and v otherwise.
func Or[T ~int | ~int32 | ~int64](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}
