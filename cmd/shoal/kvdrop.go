package main

import (
	"slices"
	"strings"

	"github.com/shoalpool/shoal/internal/connstr"
)

// dropKeywords returns the keyword=value connection string s without the
// pairs whose keyword is one of keys, so that the settings the sweep
// suggests replace the target's own rather than stand beside them. Values
// are read as pgx reads them (quoted, escaped); a string that does not
// read as pairs is returned as it is.
func dropKeywords(s string, keys ...string) string {
	var b strings.Builder
	i := 0
	for i < len(s) {
		start := i
		for i < len(s) && strings.IndexByte(" \t\n\r\v\f", s[i]) >= 0 {
			i++
		}
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 {
			if strings.TrimSpace(s[i:]) != "" {
				return s
			}
			b.WriteString(s[start:])
			break
		}
		key := strings.TrimSpace(s[i : i+eq])
		v := i + eq + 1
		for v < len(s) && (s[v] == ' ' || s[v] == '\t') {
			v++
		}
		end, ok := connstr.ValueEnd(s, v)
		if !ok {
			return s
		}
		if !slices.Contains(keys, key) {
			b.WriteString(s[start:end])
		}
		i = end
	}
	return strings.TrimSpace(b.String())
}
