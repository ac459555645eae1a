package shoalgrpc

import (
	"net/url"
	"strings"
)

// redactTarget returns target fit for errors and logs: user information
// ("user:password@") and any query string are removed, since a target such
// as "dns://user:secret@resolver/host:443?token=..." may carry credentials.
func redactTarget(target string) string {
	u, err := url.Parse(target)
	if err != nil || u.Scheme == "" || (u.User == nil && u.RawQuery == "") {
		// Not a URL with secrets in known places (plain "host:port", for
		// instance); still strip anything that looks like user information.
		if at := strings.LastIndex(target, "@"); at >= 0 {
			start := strings.LastIndex(target[:at], "/") + 1 // keep "dns:///" and the like
			return target[:start] + "REDACTED@" + target[at+1:]
		}
		return target
	}
	if u.User != nil {
		u.User = url.User("REDACTED")
	}
	if u.RawQuery != "" {
		u.RawQuery = "REDACTED"
	}
	return u.String()
}

// redactedError hides the parts of the target that redactTarget removes
// from an error's message, including messages of wrapped errors (grpc-go
// quotes the target it could not parse). errors.Is and errors.As still see
// the wrapped error.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redact returns err with the raw target replaced by the redacted one in its
// message. Most targets have nothing to hide and err is returned as it is.
func (p *Pool) redact(err error) error {
	if err == nil || p.target == p.shownTarget {
		return err
	}
	msg := strings.ReplaceAll(err.Error(), p.target, p.shownTarget)
	for _, secret := range secretsOf(p.target) {
		msg = strings.ReplaceAll(msg, secret, "REDACTED")
	}
	return &redactedError{msg: msg, err: err}
}

// secretsOf lists the substrings of target that must not be shown: the
// user information and the query, as they appear in the raw string, the
// longest first. The user information is whatever precedes the last "@"
// after the scheme, and also just its last path segment (after an empty
// authority, "passthrough:///user:pw@host", the dialer quotes the endpoint
// alone).
func secretsOf(target string) []string {
	var out []string
	rest := target
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if at := strings.LastIndex(rest, "@"); at > 0 {
		if whole := strings.TrimLeft(rest[:at], "/"); whole != "" {
			out = append(out, whole)
		}
		if seg := rest[strings.LastIndex(rest[:at], "/")+1 : at]; seg != "" && seg != strings.TrimLeft(rest[:at], "/") {
			out = append(out, seg)
		}
	}
	if q := strings.Index(target, "?"); q >= 0 && q+1 < len(target) {
		out = append(out, target[q+1:])
	}
	return out
}
