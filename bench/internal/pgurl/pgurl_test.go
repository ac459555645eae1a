package pgurl

import (
	"net/url"
	"strings"
	"testing"
)

// WithParams replaces the parameters it sets, keeps the hosts, the user,
// the password and the other parameters.
func TestWithParams(t *testing.T) {
	cs := "postgres://u:pw-secret@127.0.0.1:5441,127.0.0.1:5442/db?sslmode=disable&target_session_attrs=read-write"
	got, err := WithParams(cs, "target_session_attrs", "prefer-standby", "pool_max_conns", "4")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Host != "127.0.0.1:5441,127.0.0.1:5442" || u.Path != "/db" || q.Get("sslmode") != "disable" ||
		len(q["target_session_attrs"]) != 1 || q.Get("target_session_attrs") != "prefer-standby" || q.Get("pool_max_conns") != "4" {
		t.Fatalf("got %q", got)
	}
	if p, _ := u.User.Password(); u.User.Username() != "u" || p != "pw-secret" {
		t.Fatalf("got %q: the user and password changed", got)
	}
}

// A string Edit cannot edit is refused with an error that names why and
// never holds the password.
func TestEditRefuses(t *testing.T) {
	for _, c := range []struct{ cs, why string }{
		{"postgres://u:pw-secret@127.0.0.1:x/db\x7f", "not a URL connection string"},
		{"host=127.0.0.1 user=u password=pw-secret", "not a postgres:// connection string"},
		{"mysql://u:pw-secret@127.0.0.1/db", `(scheme "mysql")`},
	} {
		_, err := Edit(c.cs, func(*url.URL) { t.Errorf("%q: edited", c.cs) })
		if err == nil || !strings.Contains(err.Error(), c.why) || strings.Contains(err.Error(), "pw-secret") {
			t.Errorf("%q: error %v, want one saying %q without the password", c.cs, err, c.why)
		}
	}
}
