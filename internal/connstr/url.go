package connstr

import (
	"net/url"
	"slices"
	"strings"
)

// atKeys are the query parameters whose values may hold an '@' of their
// own (an e-mail address as application name, a password): an '@' in any
// other parameter's value is more likely the end of a password that held
// an unescaped '/'.
var atKeys = []string{"application_name", "fallback_application_name", "options", "user", "username"}

// readURL reads a URL-form string whose authority starts at off.
func readURL(s string, off int) Reading {
	rest := s[off:]
	// net/url ends the authority at the first '/', '?' or '#' and takes
	// the last '@' before it as the end of the user information; libpq
	// and pgx take the first '@' unless a '/' comes before it. A password
	// with an unescaped '?', '/' or '@' makes them disagree.
	authEnd := strings.IndexAny(rest, "/?#")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	netAt := strings.LastIndex(rest[:authEnd], "@")
	pqAt := -1
	if i := strings.IndexAny(rest, "@/"); i >= 0 && rest[i] == '@' {
		pqAt = i
	}
	problem := ""
	switch {
	case netAt != pqAt:
		problem = "has an '@' that may be part of the password (%-escape '@', '/', '?' and '#' in it)"
	case strings.Contains(rest, "#"):
		problem = "has a '#' (%-escape it as %23 if it is part of the password)"
	default:
		if _, err := url.Parse(s); err != nil {
			problem = "does not parse as a URL (check the host and the port, and that special characters in the user or password are %-escaped)"
		} else {
			problem = strayAt(rest[netAt+1:])
		}
	}
	if problem != "" {
		return Reading{Secrets: merge(ambiguousURLSecrets(s, off)), Problem: problem}
	}
	var spans []Span
	if netAt >= 0 {
		if colon := strings.IndexByte(rest[:netAt], ':'); colon >= 0 {
			spans = append(spans, Span{off + colon + 1, off + netAt})
		}
	}
	after := off + netAt + 1
	if q := strings.IndexByte(s[after:], '?'); q >= 0 {
		spans = append(spans, querySecrets(s, after+q+1)...)
	}
	return Reading{Secrets: merge(spans)}
}

// strayAt reports an '@' after the user information that is not data of a
// query parameter known to hold one, as a problem ("" for none).
func strayAt(tail string) string {
	path, query, _ := strings.Cut(tail, "?")
	if strings.Contains(path, "@") {
		return "has an '@' after its host (%-escape any '@', '/', '?' or '#' in the password)"
	}
	for _, pair := range strings.Split(query, "&") {
		if !strings.Contains(pair, "@") {
			continue
		}
		key, value, ok := strings.Cut(pair, "=")
		dec, err := url.QueryUnescape(key)
		_, afterAt, _ := strings.Cut(value, "@")
		switch {
		case ok && err == nil && IsSecretKey(dec):
			// A secret's value is masked whole, whatever it holds.
		case !ok || err != nil || !slices.Contains(atKeys, dec) || strings.Contains(afterAt, "/"):
			return "has an '@' in its query that may end a password (%-escape any '@', '/', '?' or '#' in the password)"
		}
	}
	return ""
}

// querySecrets returns the values of the secret parameters of the query
// that starts at q.
func querySecrets(s string, q int) []Span {
	var spans []Span
	for start := q; start <= len(s); {
		end := strings.IndexByte(s[start:], '&')
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		if key, _, ok := strings.Cut(s[start:end], "="); ok {
			if dec, err := url.QueryUnescape(key); err == nil && IsSecretKey(dec) || IsSecretKey(key) {
				spans = append(spans, Span{start + len(key) + 1, end})
			}
		}
		start = end + 1
	}
	return spans
}

// ambiguousURLSecrets covers every place a password could be in a URL
// whose structure is in doubt: from the first ':' of what may be the user
// information to its last '@', and every value of a secret parameter
// anywhere in the string, to the next '&' or the end.
func ambiguousURLSecrets(s string, off int) []Span {
	rest := s[off:]
	var spans []Span
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if colon := strings.IndexByte(rest[:at], ':'); colon >= 0 {
			spans = append(spans, Span{off + colon + 1, off + at})
		}
	}
	for i := off; i < len(s); i++ {
		if s[i] == '?' || s[i] == '&' {
			spans = append(spans, querySecrets(s[:firstAmp(s, i+1)], i+1)...)
		}
	}
	return spans
}

// firstAmp returns the end of the parameter that starts at i: the next
// '&' or the end of s.
func firstAmp(s string, i int) int {
	if j := strings.IndexByte(s[i:], '&'); j >= 0 {
		return i + j
	}
	return len(s)
}
