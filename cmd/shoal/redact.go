package main

import (
	"io"
	"strings"

	"github.com/shoalpool/shoal/internal/namemask"
)

// redactRaw hides the passwords of the URLs and key=value connection
// strings quoted in s, each where it stands, for text that may quote a
// target shoal could not parse (a misplaced argument, a flag error), or
// one masked before (the target in a report), whose closing quote stays.
func redactRaw(s string) string { return namemask.Text(s, redactedWord) }

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
