package main

import (
	"io"
	"regexp"
)

var (
	// userinfoPassword matches the password of a URL's userinfo
	// ("scheme://user:PASSWORD@"), up to the last "@" of the URL: a
	// password may hold an unescaped '/', '?' or '#' (generated ones
	// often do), so hiding more than the password beats hiding less.
	userinfoPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^:/@\s"'` + "`" + `]*:)([^\s"'` + "`" + `]*)@`)
	// queryPassword matches secret query parameters ("?password=...").
	queryPassword = regexp.MustCompile(`(?i)([?&](?:password|passwd|pass|pwd|secret|token|sslpassword)=)[^&\s"'` + "`" + `]*`)
)

// redactRaw hides every URL password in s, for text that may quote a
// target shoal could not parse (a misplaced argument, a flag error).
func redactRaw(s string) string {
	s = userinfoPassword.ReplaceAllString(s, "${1}"+redactedWord+"@")
	return queryPassword.ReplaceAllString(s, "${1}"+redactedWord)
}

// scrubWriter passes writes on with the target's secrets and any URL
// password replaced: a last line of defence for error text that comes from
// a client library. The callers write whole lines or whole documents, so a
// secret is not split across writes.
type scrubWriter struct {
	w io.Writer
	t *target
}

// Write writes p with the secrets replaced.
func (s scrubWriter) Write(p []byte) (int, error) {
	out := redactRaw(s.t.redact(string(p)))
	if _, err := io.WriteString(s.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}
