package shoalpgx

import "strings"

// Reading a connection string as its writer meant it. pgx takes a string
// for a URL only when it begins with postgres:// or postgresql:// exactly,
// and reads anything else as keyword=value pairs: "POSTGRES://u:pw@h/db?x=y",
// or the same with a space before it, became one keyword, the URL up to its
// first '=', which pgx sends to the server as a run-time parameter, and the
// server's refusal then showed it, password and all, in every dial's error.

// asWritten returns s without the white space around it and with a
// PostgreSQL URL's scheme in lower case, as pgx reads it.
func asWritten(s string) string {
	s = strings.TrimSpace(s)
	for _, scheme := range []string{"postgresql://", "postgres://"} {
		if len(s) >= len(scheme) && strings.EqualFold(s[:len(scheme)], scheme) {
			return scheme + s[len(scheme):]
		}
	}
	return s
}

// errNotParamName is the reason ParseConfig gives for a keyword that no
// server parameter could have as its name.
const errNotParamName = "cannot parse connection string: a keyword holds characters no server parameter's name has " +
	"(such as ':', '/', '@' or '?'); a URL must begin with postgres:// or postgresql://"

// isParamName reports whether key could name a server parameter, which a
// keyword pgx does not know becomes (a run-time parameter): letters,
// digits, '_', '$', and '.' for an extension's.
func isParamName(key string) bool {
	for _, c := range []byte(key) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c == '.') {
			return false
		}
	}
	return key != ""
}
