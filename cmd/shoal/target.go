package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/shoalpool/shoal/internal/connstr"
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
	Scheme   string   // "postgres", "https", ...; "postgres" for a key=value string
	Raw      string   // as given, with any password
	URL      *url.URL // parsed, with any password; nil for a key=value string
	HostPort string   // host:port to dial, default port filled in; for PostgreSQL the first of Hosts
	Hosts    []string // every address the target names, in order: HostPort alone but for PostgreSQL, whose may be sockets
	Redacted string   // Raw with the password replaced by REDACTED where it stands
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

// parseTarget parses s. Its errors name the wrong part (scheme, host,
// port) and never contain the password: url.Parse's own errors quote the
// whole string, so they are not passed on.
func parseTarget(s string) (*target, error) {
	// A target pasted with a space around it is the same target; left in,
	// the space makes pgx read a URL as one keyword=value pair.
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, targetError("url", "empty; want a URL such as postgres://user@host:5432/db")
	}
	reading := connstr.Read(s)
	redacted := reading.Mask(s, redactedWord)
	scheme, _, ok := strings.Cut(s, "://")
	if !ok || !reading.URL {
		if strings.Contains(s, "=") && pgHosts != nil {
			return parseKeywordValueTarget(s, reading, redacted)
		}
		return nil, targetError("scheme", "missing; want a URL starting with one of %s, or a PostgreSQL key=value string", schemes)
	}
	t := &target{Raw: s, Scheme: strings.ToLower(scheme), Redacted: redacted}
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
		return nil, targetError("scheme", "%q is not supported; use one of %s", scheme, schemes)
	}
	if reading.Problem != "" {
		return nil, targetError("url", "%s %s", redacted, reading.Problem)
	}
	if t.Kind == targetPostgres {
		// A scheme is case-insensitive, but pgx reads a URL only under
		// "postgres://" or "postgresql://" as written, and POSTGRES://...
		// as a keyword=value pair whose name holds the password.
		t.Raw = t.Scheme + s[len(scheme):]
	}
	u, err := url.Parse(s)
	if err != nil { // connstr reports these; kept for safety
		return nil, targetError("url", "%s does not parse as a URL", redacted)
	}
	t.URL = u

	host := u.Hostname()
	// A PostgreSQL URL may name its host as a parameter instead
	// (postgres://u@/db?host=/var/run/postgresql), as shoalpgx reads it.
	hostParam := t.Kind == targetPostgres && pgHosts != nil && u.Query().Get("host") != ""
	if host == "" && !hostParam {
		return nil, targetError("host", "missing in %s", t.Redacted)
	}
	if host != "" {
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
		t.Hosts = []string{t.HostPort}
	}
	if t.Kind == targetPostgres && pgHosts != nil {
		// net/url reads postgres://u@h1:5432,h2:5432/db as one host,
		// "h1:5432,h2", on port 5432; shoalpgx tries each in turn.
		hosts, err := pgHosts(t.Raw)
		if err != nil {
			return nil, targetError("url", "%v", err)
		}
		t.HostPort, t.Hosts = hosts[0], hosts
	}
	return t, nil
}

// parseKeywordValueTarget parses a PostgreSQL key=value connection string
// (host=... user=... password=...), as shoalpgx.ParseConfig accepts it.
func parseKeywordValueTarget(s string, reading connstr.Reading, redacted string) (*target, error) {
	if reading.Problem != "" {
		return nil, targetError("url", "%s %s", redacted, reading.Problem)
	}
	hosts, err := pgHosts(s)
	if err != nil {
		return nil, targetError("url", "%v", err)
	}
	return &target{Kind: targetPostgres, Scheme: "postgres", Raw: s, HostPort: hosts[0], Hosts: hosts, Redacted: redacted}, nil
}
