package main

import (
	"net/url"
	"strings"
	"testing"
)

// withSessionAttrs replaces target_session_attrs, keeps the hosts and the
// other settings, and keeps the password out of its errors.
func TestWithSessionAttrs(t *testing.T) {
	cs := "postgres://u:pw-secret@127.0.0.1:5441,127.0.0.1:5442/db?sslmode=disable&target_session_attrs=read-write"
	got, err := withSessionAttrs(cs, "prefer-standby")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Host != "127.0.0.1:5441,127.0.0.1:5442" || u.Path != "/db" || q.Get("sslmode") != "disable" ||
		len(q["target_session_attrs"]) != 1 || q.Get("target_session_attrs") != "prefer-standby" {
		t.Fatalf("got %q", got)
	}
	if p, _ := u.User.Password(); u.User.Username() != "u" || p != "pw-secret" {
		t.Fatalf("got %q: the user and password changed", got)
	}
	_, err = withSessionAttrs("postgres://u:pw-secret@127.0.0.1:x/db\x7f", "any")
	if err == nil || strings.Contains(err.Error(), "pw-secret") {
		t.Fatalf("a bad string: error %v, want one without the password", err)
	}
}
