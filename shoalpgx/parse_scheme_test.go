package shoalpgx

import (
	"fmt"
	"strings"
	"testing"
)

// A URL whose scheme pgx does not take as one (upper case, white space
// before it, a typo) was read by pgx as a keyword=value string whose first
// keyword is the URL up to its first '=': ParseConfig succeeded, and the
// pool sent that keyword, password and all, to the server as a run-time
// parameter, whose refusal then showed it in every dial's error and log
// line. ParseConfig now reads the scheme as libpq's users write it, in any
// case and with white space around the string, and refuses a keyword that
// cannot be a parameter's name, without showing it.
func TestParseConfigReadsTheSchemeAsWritten(t *testing.T) {
	const pw = "Sekr1t"
	for _, cs := range []string{
		"POSTGRES://app:" + pw + "@127.0.0.1:5432/app?sslmode=disable",
		"PostgreSQL://app:" + pw + "@127.0.0.1:5432/app?sslmode=disable",
		"  postgres://app:" + pw + "@127.0.0.1:5432/app?sslmode=disable\n",
	} {
		cfg, err := ParseConfig(cs)
		if err != nil {
			t.Errorf("ParseConfig(%q): %v", strings.ReplaceAll(cs, pw, "xxxxx"), err)
			continue
		}
		cc := cfg.ConnConfig
		if cc.Host != "127.0.0.1" || cc.User != "app" || cc.Password != pw || cc.Database != "app" {
			t.Errorf("ParseConfig(%q) read host %q user %q database %q, password given: %v",
				strings.ReplaceAll(cs, pw, "xxxxx"), cc.Host, cc.User, cc.Database, cc.Password == pw)
		}
		for k := range cc.RuntimeParams {
			if strings.Contains(k, pw) {
				t.Errorf("ParseConfig(%q) left a run-time parameter holding the password", strings.ReplaceAll(cs, pw, "xxxxx"))
			}
		}
	}
	for _, cs := range []string{
		"postgress://app:" + pw + "@127.0.0.1:5432/app?sslmode=disable",
		"postgres:/app:" + pw + "@127.0.0.1:5432/app?sslmode=disable",
		"pg://app:" + pw + "@127.0.0.1:5432/app?sslmode=disable",
		"host=127.0.0.1 app:" + pw + "@x?sslmode=disable",
	} {
		_, err := ParseConfig(cs)
		if err == nil {
			t.Errorf("ParseConfig(%q) succeeded, want an error", strings.ReplaceAll(cs, pw, "xxxxx"))
			continue
		}
		for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			if strings.Contains(text, pw) {
				t.Errorf("the error shows the password: %s", strings.ReplaceAll(text, pw, "<<the password>>"))
			}
		}
	}
}
