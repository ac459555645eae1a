package shoalpgx

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// redacted stands in for a password wherever one would be shown.
const redacted = "xxxxx"

// passwordPattern finds password=value in keyword/value connection strings,
// quoted ('...' with \' escapes) or not.
var passwordPattern = regexp.MustCompile(`password\s*=\s*('(?:[^'\\]|\\.)*'|[^\s]+)`)

// passwordsIn returns every string in connString that may be a password:
// the URL's user-info password and the values of password= keywords. It is
// lenient on purpose: it runs on strings pgx could not parse.
func passwordsIn(connString string) []string {
	var found []string
	if i := strings.Index(connString, "://"); i >= 0 {
		rest := connString[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			userinfo := rest[:at]
			if colon := strings.Index(userinfo, ":"); colon >= 0 {
				pw := userinfo[colon+1:]
				found = append(found, pw)
				if un, err := url.PathUnescape(pw); err == nil && un != pw {
					found = append(found, un)
				}
			}
		}
		if u, err := url.Parse(connString); err == nil {
			if pw := u.Query().Get("password"); pw != "" {
				found = append(found, pw, url.QueryEscape(pw))
			}
		}
	}
	for _, m := range passwordPattern.FindAllStringSubmatch(connString, -1) {
		v := m[1]
		found = append(found, v)
		if len(v) >= 2 && v[0] == '\'' {
			found = append(found, strings.ReplaceAll(v[1:len(v)-1], `\'`, `'`))
		}
	}
	return found
}

// redact replaces every occurrence of each secret in s. Empty secrets are
// skipped, and longer ones are replaced first so that a secret that contains
// another is masked whole.
func redact(s string, secrets ...string) string {
	var list []string
	for _, sec := range secrets {
		if sec != "" {
			list = append(list, sec)
		}
	}
	for changed := true; changed; {
		changed = false
		for i := 1; i < len(list); i++ {
			if len(list[i]) > len(list[i-1]) {
				list[i], list[i-1] = list[i-1], list[i]
				changed = true
			}
		}
	}
	for _, sec := range list {
		s = strings.ReplaceAll(s, sec, redacted)
	}
	return s
}

// String describes the config without its password: where it connects, as
// whom, and the pool settings. Use it in logs instead of the connection
// string.
func (c *Config) String() string {
	var b strings.Builder
	b.WriteString("shoalpgx.Config{")
	if cc := c.ConnConfig; cc != nil {
		// A password could reach the text only through a field that holds
		// it by mistake (a user or application name): those are masked,
		// and only those, so that a short password does not mask digits
		// of the pool settings and show itself by where they are missing.
		m := func(field string) string { return redact(field, cc.Password) }
		fmt.Fprintf(&b, "host=%s port=%d database=%s user=%s", m(cc.Host), cc.Port, m(cc.Database), m(cc.User))
		if cc.Password != "" {
			b.WriteString(" password=" + redacted)
		}
		if cc.TLSConfig == nil {
			b.WriteString(" tls=off")
		} else {
			b.WriteString(" tls=on")
		}
		for _, fb := range cc.Fallbacks {
			fmt.Fprintf(&b, " fallback=%s:%d", m(fb.Host), fb.Port)
		}
		if app := cc.RuntimeParams["application_name"]; app != "" {
			b.WriteString(" application_name=" + m(app))
		}
		b.WriteString(" ")
	}
	fmt.Fprintf(&b, "pool_max_conns=%d pool_min_idle=%d pool_min_conns=%d pool_partitions=%d pool_max_waiters=%d "+
		"pool_max_conn_lifetime=%s pool_max_conn_lifetime_jitter=%s pool_max_conn_idle_time=%s "+
		"pool_health_check_after=%s pool_ping_timeout=%s pool_handoff_after=%s}",
		c.MaxConns, c.MinIdleConns, c.MinConns, c.Partitions, c.MaxWaiters,
		c.MaxConnLifetime, c.MaxConnLifetimeJitter, c.MaxConnIdleTime,
		c.HealthCheckAfter, c.PingTimeout, c.HandoffAfter)
	return b.String()
}

// GoString is String, so that %#v does not print the config's fields
// either.
func (c *Config) GoString() string { return c.String() }

// connectError is a failed connect without the pgconn.Config (password
// included) that pgconn.ConnectError carries. Its text is pgx's, with the
// password masked in case a server or a hook put it there; it unwraps to
// what the ConnectError wrapped, so errors.As still finds a *pgconn.PgError
// (for example SQLSTATE 28P01, a wrong password).
type connectError struct {
	msg string
	err error
}

func (e *connectError) Error() string { return e.msg }
func (e *connectError) Unwrap() error { return e.err }

// scrubConnectError replaces a *pgconn.ConnectError in err with a
// connectError and masks password in the text of any error. An error of
// the caller's own (a hook's) whose text holds the password is wrapped
// whole, so that errors.Is and errors.As still find it and its causes; only
// the text shown is masked.
func scrubConnectError(err error, password string) error {
	if err == nil {
		return nil
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return &connectError{msg: redact(err.Error(), password), err: ce.Unwrap()}
	}
	if password != "" && strings.Contains(err.Error(), password) {
		return &connectError{msg: redact(err.Error(), password), err: err}
	}
	return err
}
