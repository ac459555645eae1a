// Package connstrtest builds connection strings with a password at a known
// place, for the tests and fuzz targets of every package that masks one.
package connstrtest

import (
	"fmt"
	"net/url"
	"strings"
)

// Built is a connection string and where its password is in it.
type Built struct {
	S          string // the connection string
	Start, End int    // the password's bytes in S, as written (escaped or quoted)
	Password   string // the password itself
	// Clean reports whether the string is well formed: every special
	// character of the password escaped, so that a parser must accept it
	// and read Password from it.
	Clean bool
}

// Masked returns S with the password's bytes replaced by word: what a
// masker must produce, no more and no less.
func (b Built) Masked(word string) string { return b.S[:b.Start] + word + b.S[b.End:] }

// URL builds postgres://user:password@127.0.0.1:5432/db?sslmode=disable
// &application_name=app. With raw, the password is written as it is
// (only '%' escaped, so that it still means itself): a generated password
// with '@', '#', '/' or '?' makes an ambiguous string, which a masker
// must hide whole. Without raw, every part is escaped, and the
// application name keeps its '@' unescaped (an e-mail address, say),
// which is valid and must not be taken for the end of a password. With
// inQuery the password is a password= parameter instead of in the user
// information.
func URL(user, password, db, app string, raw, inQuery bool) Built {
	var b strings.Builder
	b.WriteString("postgres://")
	escaped := url.UserPassword("", password).String()[1:] // after the ':'
	pw := escaped
	if raw {
		pw = strings.ReplaceAll(password, "%", "%25")
	}
	var start, end int
	if user != "" || !inQuery {
		b.WriteString(url.User(user).String())
		if !inQuery {
			b.WriteString(":")
			start = b.Len()
			b.WriteString(pw)
			end = b.Len()
		}
		b.WriteString("@")
	}
	b.WriteString("127.0.0.1:5432/" + strings.ReplaceAll(url.PathEscape(db), "@", "%40") + "?sslmode=disable")
	if app != "" {
		a := strictEscape(app)
		if !raw {
			a = strings.ReplaceAll(a, "%40", "@")
		}
		b.WriteString("&application_name=" + a)
	}
	if inQuery {
		b.WriteString("&password=")
		v := strings.ReplaceAll(strictEscape(password), "%40", "@")
		start = b.Len()
		b.WriteString(v)
		end = b.Len()
	}
	return Built{S: b.String(), Start: start, End: end, Password: password, Clean: !raw || inQuery || rawClean(password)}
}

// KeywordValue builds host=127.0.0.1 user=U password=P dbname=D, each
// value quoted and escaped as libpq wants when it needs to be, with
// spaces around the '=' of the password when spaced is set.
func KeywordValue(user, password, db string, spaced bool) Built {
	var b strings.Builder
	b.WriteString("host=127.0.0.1 user=" + quote(user) + " password")
	if spaced {
		b.WriteString(" = ")
	} else {
		b.WriteString("=")
	}
	start := b.Len()
	b.WriteString(quote(password))
	end := b.Len()
	b.WriteString(" dbname=" + quote(db))
	return Built{S: b.String(), Start: start, End: end, Password: password, Clean: true}
}

// quote writes v as a keyword/value value: bare when it can be, else in
// single quotes with '\” and '\\' escaped.
func quote(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\n\r\v\f'\\") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(v) + "'"
}

// Seeds are passwords every masking test should try: one letter, common
// words, the user's or database's name, every special character, '@' and
// '#' inside, and the issue's own examples.
var Seeds = []string{
	"x", "a", "s", "1", "postgres", "shoal", "secret", "password", "admin", "default", "disable", "host",
	"correct-horse@battery-staple", "8080/Secret", "p@ss#w0rd", "pa@Secret", "se/cr3t?pw#x",
	"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", "a b", "it's", `back\slash`, "50%", "%41", "ü-ß", "=", "&", "?user=a",
}

// rawClean reports whether a password written unescaped still makes a
// valid URL: every character one that net/url allows in user information,
// except '@' ('%' is escaped by URL).
func rawClean(password string) bool {
	for _, c := range password {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-._:~!$&'()*+,;=%", c)
		if !ok {
			return false
		}
	}
	return true
}

// strictEscape percent-escapes every byte of v but letters, digits and
// "-._~", so that a query value means itself to every decoder ('+' stays
// a plus sign).
func strictEscape(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
