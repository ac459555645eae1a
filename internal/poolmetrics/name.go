package poolmetrics

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// defaultPorts fills in the port of an origin whose URL leaves it out, so
// that "https://api.example.com" and "https://api.example.com:443" name the
// same pool.
var defaultPorts = map[string]string{
	"http":       "80",
	"https":      "443",
	"ws":         "80",
	"wss":        "443",
	"postgres":   "5432",
	"postgresql": "5432",
}

// OriginName returns a pool name for the server a URL points at:
// scheme://host:port, lower-cased, with the port filled in for http, https,
// ws, wss and postgres(ql) when the URL leaves it out. The user, password,
// path, query and fragment are dropped, so a connection string's password
// (in its userinfo or in a query parameter such as ?password=) never
// reaches a label. It suits one pool per origin, as shoalhttp keeps; two
// PostgreSQL pools to one server for different databases or users get the
// same name, so name those yourself.
//
// It fails for a string that is not an absolute URL with a host, such as a
// key=value DSN, and for one with an '@' after what the parser took for the
// host (a password with an unescaped '/', '?' or '#'); the error, prefixed
// with pkg, never repeats the input.
func OriginName(pkg, rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// Neither url.Error nor its cause is safe to show: the cause quotes
		// the bad part ("invalid port \":s3cret\" after host"), which is
		// the password when an unescaped '/' in it ended the host early.
		return "", errors.New(pkg + ": pool name from URL: not a valid URL")
	}
	if u.Scheme == "" || u.Host == "" {
		return "", errors.New(pkg + ": pool name from URL: not an absolute URL with a host")
	}
	if _, rest, ok := strings.Cut(rawURL, "://"); ok && u.User == nil && strings.Contains(rest, "@") {
		// An '@' the parser did not take for the end of a user and
		// password: an unescaped '#', '?' or '/' in a password ends the
		// host early, and "app:4242#x@db" would name the pool after the
		// user and the password ("app:4242").
		return "", errors.New(pkg + ": pool name from URL: an '@' follows the host; percent-encode any '/', '?' or '#' in the password")
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		port = defaultPorts[scheme]
	}
	if port == "" {
		if strings.Contains(host, ":") { // IPv6 literal
			host = "[" + host + "]"
		}
		return scheme + "://" + host, nil
	}
	return scheme + "://" + net.JoinHostPort(host, port), nil
}
