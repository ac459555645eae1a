package main

import (
	"slices"
	"strings"

	"github.com/shoalpool/shoal/internal/connstr"
)

// dropKeywords returns the keyword=value connection string s without the
// pairs whose keyword is one of keys, so that the settings the sweep
// suggests replace the target's own rather than stand beside them. The
// pairs are read as pgx reads them (connstr.ReadKeywordValue); a string
// that does not read as pairs is returned as it is.
func dropKeywords(s string, keys ...string) string {
	kv := connstr.ReadKeywordValue(s)
	if kv.Problem != "" {
		return s
	}
	var b strings.Builder
	last := 0 // each kept pair goes with the white space before it
	for _, p := range kv.Pairs {
		if !slices.Contains(keys, p.Key) {
			b.WriteString(s[last:p.Value.End])
		}
		last = p.Value.End
	}
	// Only the white space before the first kept pair is trimmed: the end
	// of the last value may be an escaped space that belongs to it.
	return strings.TrimLeft(b.String(), " \t\n\r\v\f")
}
