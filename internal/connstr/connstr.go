// Package connstr finds the passwords in a connection string by where they
// are, so that they can be masked there and nowhere else.
//
// Masking by value (replace every copy of the password's text) is wrong
// twice over: a short or common password ("x", "postgres") masks letters
// of unrelated words, and a password that a parser split (an unescaped
// '@' or '#') is not found whole, so its pieces show. Read instead walks
// the string as the URL and keyword/value parsers do and returns the byte
// ranges of the userinfo password and of the password-like parameters.
//
// A string whose structure is ambiguous (an '@' that one parser reads as
// the end of the user information and another as data, an '@' in the path,
// a '#', a keyword/value string that does not parse) is reported with a
// Problem, and its Secrets then cover every place a password could be:
// such a string should be refused, and showing a little more masked than
// the password beats showing a piece of it. One shape stays ambiguous
// without being detected: a password holding an unescaped '/', then '?',
// then a parameter name and '=' and an '@' that has no path after its
// host (postgres://u:a/b?user=c@host); it reads as a URL without
// userinfo, as net/url and pgx both read it.
package connstr

import (
	"slices"
	"strings"
)

// Span is the byte range [Start, End) of a secret in a connection string.
type Span struct {
	Start, End int // byte offsets into the string: Start included, End not
}

// Reading is what Read found.
type Reading struct {
	// Secrets are the ranges that hold a password, in order and not
	// overlapping.
	Secrets []Span
	// Problem, when not empty, says why the string is ambiguous or
	// malformed ("has an '@' after its host", say); it never quotes the
	// string.
	Problem string
	// URL reports whether the string is in URL form (scheme://...), as
	// opposed to keyword/value form (host=... user=...).
	URL bool
}

// secretKeys are the query parameters and keywords whose values are
// secrets: libpq's two, and the names HTTP services use for theirs.
var secretKeys = []string{"password", "sslpassword", "passwd", "pass", "pwd", "secret", "token"}

// IsSecretKey reports whether a parameter name (already decoded) holds a
// secret. Names are compared without regard to case: a server that reads
// them case-sensitively is not hurt by a little more masking.
func IsSecretKey(key string) bool { return slices.Contains(secretKeys, strings.ToLower(key)) }

// Read finds the secrets in s, a connection string in URL or keyword/value
// form.
func Read(s string) Reading {
	if i := schemeEnd(s); i > 0 {
		r := readURL(s, i+len("://"))
		r.URL = true
		return r
	}
	return keywordValueSecrets(s)
}

// schemeEnd returns where the URL scheme that starts s ends, right before
// its "://", or -1 if s starts with none (RFC 3986: a letter, then
// letters, digits, '+', '-' or '.'). It reads no further than the scheme,
// which has no "://" in it: the first "://" of s is the one after it.
func schemeEnd(s string) int {
	i := 0
	for i < len(s) && isSchemeByte(s[i], i == 0) {
		i++
	}
	if i == 0 || !strings.HasPrefix(s[i:], "://") {
		return -1
	}
	return i
}

// isSchemeByte reports whether c may stand in a URL scheme, first if it
// would start it.
func isSchemeByte(c byte, first bool) bool {
	letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	return letter || !first && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')
}

// Mask returns s with each secret replaced by word.
func Mask(s, word string) string { return Read(s).Mask(s, word) }

// Mask returns s, the string r was read from, with each secret replaced by
// word.
func (r Reading) Mask(s, word string) string {
	if len(r.Secrets) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range r.Secrets {
		b.WriteString(s[last:sp.Start])
		b.WriteString(word)
		last = sp.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// merge sorts spans and joins those that overlap or touch, dropping empty
// ones.
func merge(spans []Span) []Span {
	spans = slices.DeleteFunc(spans, func(s Span) bool { return s.End <= s.Start })
	slices.SortFunc(spans, func(a, b Span) int { return a.Start - b.Start })
	var out []Span
	for _, s := range spans {
		if n := len(out); n > 0 && s.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, s.End)
			continue
		}
		out = append(out, s)
	}
	return out
}
