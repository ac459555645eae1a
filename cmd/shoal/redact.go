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
	return keywordPassword.ReplaceAllStringFunc(s, func(m string) string {
		sub := keywordPassword.FindStringSubmatch(m)
		return sub[1] + maskValue(sub[2])
	})
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
