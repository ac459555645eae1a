package main

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// TestPasswordParameterKeepsTheQueryAfterIt: a URL whose password is a
// query parameter with another after it (?password=...&sslmode=disable)
// keeps that parameter, and the quote or parenthesis that closes it, in
// everything shoal writes: --json stays JSON, an error keeps its words.
func TestPasswordParameterKeepsTheQueryAfterIt(t *testing.T) {
	u, err := url.Parse(postgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	u.User = url.User(u.User.Username())
	u.RawQuery = "password=" + url.QueryEscape(pw) + "&" + u.RawQuery
	want := strings.Replace(u.String(), "password="+url.QueryEscape(pw), "password="+redactedWord, 1)

	rep, r := benchTarget(t, u.String(), "--only", "churn", "--workers", "1")
	if rep.Target != want {
		t.Errorf("report's target %q, want %q", rep.Target, want)
	}
	if strings.Contains(r.stdout+r.stderr, "password="+url.QueryEscape(pw)) {
		t.Errorf("password printed:\n%s\n%s", r.stdout, r.stderr)
	}

	for _, raw := range []string{
		"postgres://u@127.0.0.1:1/db?password=S3cret&sslmode=disable",
		"postgres://u@127.0.0.1:1/db?sslpassword=S3cret&sslmode=disable",
	} {
		tg, err := parseTarget(raw)
		if err != nil {
			t.Fatal(err)
		}
		text := fmt.Sprintf("shoal bench: cannot reach 127.0.0.1:1 (from --target %s): connection refused\n", raw)
		var b bytes.Buffer
		fmt.Fprint(scrubWriter{&b, tg}, text)
		if want := strings.ReplaceAll(text, "S3cret", redactedWord); b.String() != want {
			t.Errorf("scrubWriter wrote\n%s\nwant\n%s", b.String(), want)
		}
	}

	// In free text: a key=value password that looks like a URL is still
	// masked, up to the quote that closes it; a masked URL in JSON keeps
	// the rest of its query.
	for text, want := range map[string]string{
		`unexpected argument "password=a://S3cret"`:                   `unexpected argument "password=REDACTED"`,
		`{"target": "https://h/?password=REDACTED&x=1", "n": 1}`:      `{"target": "https://h/?password=REDACTED&x=1", "n": 1}`,
		`{"target": "https://h/?x=1&sslpassword=S3cret&y=2", "n": 1}`: `{"target": "https://h/?x=1&sslpassword=REDACTED&y=2", "n": 1}`,
	} {
		if got := redactRaw(text); got != want {
			t.Errorf("redactRaw(%s)\n got %s\nwant %s", text, got, want)
		}
	}
}
