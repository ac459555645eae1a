package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// targetKind is the protocol family of a --target.
type targetKind int

const (
	targetPostgres   targetKind = iota + 1
	targetHTTP                  // https:// or http://
	targetClickHouse            // clickhouse+http(s)://
	targetInfluxDB              // influxdb+http(s)://
	targetGRPC                  // grpc:// (plaintext) or grpcs:// (TLS)
)

// schemes lists the accepted target schemes, for errors and usage.
const schemes = "postgres://, postgresql://, clickhouse+http(s)://, influxdb+http(s)://, grpc://, grpcs://, https://, http://"

// target is a parsed --target. Raw holds the password and is only ever
// handed to a client library; everything printed uses Redacted.
type target struct {
	Kind     targetKind
	Scheme   string
	Raw      string   // as given, with any password
	URL      *url.URL // parsed, with any password
	HostPort string   // host:port to dial, default port filled in
	Redacted string   // Raw with the password replaced by REDACTED
	secrets  []string // the password in the forms it may appear
}

// redactedWord replaces passwords in everything shoal prints or writes.
const redactedWord = "REDACTED"

// errTarget is wrapped by every --target error.
var errTarget = errors.New("bad --target")

// targetError names the part of a target that is wrong, never showing the
// password.
func targetError(part, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", errTarget, part, fmt.Sprintf(format, args...))
}

// secretParams are query parameters that carry secrets.
var secretParams = []string{"password", "passwd", "pass", "pwd", "secret", "token", "sslpassword"}

// parseTarget parses s. Its errors name the wrong part (scheme, host,
// port) and never contain the password: url.Parse's own errors quote the
// whole string, so they are not passed on.
func parseTarget(s string) (*target, error) {
	if strings.TrimSpace(s) == "" {
		return nil, targetError("url", "empty; want a URL such as postgres://user@host:5432/db")
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return nil, targetError("scheme", "missing; want a URL starting with one of %s", schemes)
	}
	t := &target{Raw: s, Scheme: strings.ToLower(scheme)}
	defaultPort := ""
	switch t.Scheme {
	case "postgres", "postgresql":
		t.Kind, defaultPort = targetPostgres, "5432"
	case "https":
		t.Kind, defaultPort = targetHTTP, "443"
	case "http":
		t.Kind, defaultPort = targetHTTP, "80"
	case "clickhouse+http":
		t.Kind, defaultPort = targetClickHouse, "8123"
	case "clickhouse+https":
		t.Kind, defaultPort = targetClickHouse, "8443"
	case "influxdb+http", "influxdb+https":
		t.Kind, defaultPort = targetInfluxDB, "8086"
	case "grpc", "grpcs":
		t.Kind, defaultPort = targetGRPC, "443"
		if t.Scheme == "grpc" {
			defaultPort = "80"
		}
	default:
		return nil, targetError("scheme", "%q is not supported; use one of %s", redactRaw(scheme), schemes)
	}
	t.secrets = rawSecrets(rest)
	u, err := url.Parse(s)
	if err != nil {
		return nil, targetError("url", "%s does not parse as a URL (check the host, the port and that special characters in the user or password are %%-escaped)", t.redactedRaw())
	}
	if u.User == nil && strings.Contains(rest, "@") {
		// The parser found the host before the "@": a '/', '?' or '#' in
		// the password ended it early, and the rest of the password sits
		// in the path, query or fragment.
		return nil, targetError("url", "%s has an '@' after its host (%%-escape any '/', '?' or '#' in the password)", t.redactedRaw())
	}
	t.URL = u
	if u.User != nil {
		t.secrets = nil // the parser's password is exact
		if pw, ok := u.User.Password(); ok && pw != "" {
			t.secrets = append(t.secrets, pw, url.QueryEscape(pw), url.PathEscape(pw))
		}
	}
	q := u.Query()
	for _, k := range secretParams {
		for _, v := range q[k] {
			if v != "" {
				t.secrets = append(t.secrets, v, url.QueryEscape(v))
			}
		}
	}
	t.Redacted = t.redact(redactURL(u))

	host := u.Hostname()
	if host == "" {
		return nil, targetError("host", "missing in %s", t.Redacted)
	}
	port := u.Port()
	if port == "" {
		if strings.HasSuffix(u.Host, ":") {
			return nil, targetError("port", "empty after ':' in %s", t.Redacted)
		}
		port = defaultPort
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return nil, targetError("port", "%q is not a port number (1-65535)", port)
	}
	t.HostPort = net.JoinHostPort(host, port)
	return t, nil
}

// redactURL returns u as a string with the password and secret query
// parameters replaced.
func redactURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		if _, ok := c.User.Password(); ok {
			c.User = url.UserPassword(c.User.Username(), redactedWord)
		}
	}
	q := c.Query()
	changed := false
	for _, k := range secretParams {
		if _, ok := q[k]; ok {
			q.Set(k, redactedWord)
			changed = true
		}
	}
	if changed {
		c.RawQuery = q.Encode()
	}
	return strings.Replace(c.String(), ":"+url.QueryEscape(redactedWord)+"@", ":"+redactedWord+"@", 1)
}

// rawSecrets finds a password in a URL without parsing it, for a target
// too malformed for url.Parse: everything between the first ':' of the
// user information and the last '@', so that a password holding '/', '?',
// '#' or '@' is hidden whole (at worst more than the password is).
func rawSecrets(rest string) []string {
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return nil
	}
	if _, pw, ok := strings.Cut(rest[:at], ":"); ok && pw != "" {
		return []string{pw}
	}
	return nil
}

// redactedRaw returns Raw with every known secret replaced.
func (t *target) redactedRaw() string { return t.redact(t.Raw) }

// redact replaces every form of the target's secrets in s.
func (t *target) redact(s string) string {
	if t == nil {
		return s
	}
	for _, sec := range t.secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, redactedWord)
		}
	}
	return s
}
