package main

import (
	"io"
	"regexp"
	"strings"

	"github.com/shoalpool/shoal/internal/connstr"
)

var (
	// urlToken is a URL in free text, up to the next white space.
	urlToken = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://\S+`)
	// keywordPassword is a password keyword of a key=value connection
	// string in free text, with its value (quoted or bare).
	keywordPassword = regexp.MustCompile(`(?i)\b((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'?|\S+)`)
)

// redactRaw hides the passwords of the URLs and key=value connection
// strings quoted in s, each where it stands, for text that may quote a
// target shoal could not parse (a misplaced argument, a flag error).
func redactRaw(s string) string {
	s = urlToken.ReplaceAllStringFunc(s, maskURLToken)
	urls := urlToken.FindAllStringIndex(s, -1)
	var b strings.Builder
	last, pos := 0, 0
	for pos < len(s) {
		m := keywordPassword.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			break
		}
		for i := range m {
			m[i] += pos
		}
		valueEnd := m[5]
		if inQuery(s, m[0], urls) {
			// A URL's parameter ends at the next '&': the parameters
			// after it, and the quote or comma that closes the URL, are
			// not the password's.
			if amp := strings.IndexByte(s[m[4]:m[5]], '&'); amp >= 0 {
				valueEnd = m[4] + amp
			}
		}
		b.WriteString(s[last:m[4]])
		b.WriteString(maskValue(s[m[4]:valueEnd]))
		last, pos = valueEnd, max(valueEnd, m[0]+1)
	}
	b.WriteString(s[last:])
	return b.String()
}

// inQuery reports whether the keyword at i is a parameter of the query of
// one of urls, after a '?' or '&' there.
func inQuery(s string, i int, urls [][]int) bool {
	for _, u := range urls {
		if u[0] < i && i < u[1] && (s[i-1] == '?' || s[i-1] == '&') && strings.Contains(s[u[0]:i], "?") {
			return true
		}
	}
	return false
}

// maskURLToken masks the secrets of a URL found in free text.
func maskURLToken(u string) string {
	r := connstr.Read(u)
	var b strings.Builder
	last := 0
	for _, sp := range r.Secrets {
		b.WriteString(u[last:sp.Start])
		b.WriteString(maskValue(u[sp.Start:sp.End]))
		last = sp.End
	}
	b.WriteString(u[last:])
	return b.String()
}

// closingPunct is what may follow a value in the text around it: a JSON
// string's closing quote (escaped or not), a comma, a parenthesis.
const closingPunct = `"'\,;:.)]}>`

// maskValue returns what replaces a secret's value read out of free text.
// A token in free text runs to the next space, so a value at its end takes
// in the quote or comma that closes it: a value already masked keeps them,
// else the JSON or the quoted command around it would break. Any other
// value is masked whole, the text after it included, since where it ends
// cannot be told.
func maskValue(v string) string {
	if rest, ok := strings.CutPrefix(v, redactedWord); ok && strings.Trim(rest, closingPunct) == "" {
		return v
	}
	return redactedWord
}

// scrubWriter passes writes on with the target, wherever it is quoted
// whole, replaced by its redacted form, and the passwords of any other URL
// masked where they stand: a last line of defence for error text that
// comes from a client library. It never replaces the password's value
// elsewhere (a password "a" must not mask every "a"). The callers write
// whole lines or whole documents, so a URL is not split across writes.
type scrubWriter struct {
	w io.Writer
	t *target
}

// Write writes p with the passwords masked.
func (s scrubWriter) Write(p []byte) (int, error) {
	out := string(p)
	if s.t != nil && s.t.Raw != s.t.Redacted {
		out = strings.ReplaceAll(out, s.t.Raw, s.t.Redacted)
	}
	if _, err := io.WriteString(s.w, redactRaw(out)); err != nil {
		return 0, err
	}
	return len(p), nil
}
