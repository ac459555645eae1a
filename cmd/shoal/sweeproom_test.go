package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestSweepAdviceIsASweepTheToolRuns: when the server or the role has
// room for fewer than the 2 connections a sweep needs, the advice says so
// and what to raise, rather than a --max-conns that sweep refuses; any
// --max-conns it does suggest is one sweep's flags accept.
//
// It tests sweepOverLimit on the limits the preflight reads rather than a
// sweep against a server: the test role may not change its own CONNECTION
// LIMIT, and filling the shared server's max_connections, or lowering
// shoal_test's, would refuse the connections of every other test running.
func TestSweepAdviceIsASweepTheToolRuns(t *testing.T) {
	suggested := regexp.MustCompile(`use --max-conns (\d+) or fewer`)
	for _, c := range []struct {
		name     string
		maxConns int
		srv      pgServer
		noRoom   []string // what the advice names when there is no room; nil when there is
	}{
		{"server with room for 2", 128, pgServer{MaxConnections: 100, Reserved: 3, InUse: 95, RoleLimit: -1}, nil},
		{"server with room for 1", 128, pgServer{MaxConnections: 100, Reserved: 3, InUse: 96, RoleLimit: -1},
			[]string{"room for 1", "close some", "raise max_connections"}},
		{"full server", 128, pgServer{MaxConnections: 100, Reserved: 3, InUse: 97, RoleLimit: -1},
			[]string{"room for 0", "close some", "raise max_connections"}},
		{"server over its limit", 128, pgServer{MaxConnections: 100, Reserved: 3, InUse: 99, RoleLimit: -1},
			[]string{"room for 0", "close some", "raise max_connections"}},
		{"role limit 2", 32, pgServer{MaxConnections: 100, Reserved: 3, InUse: 5, RoleLimit: 2}, nil},
		{"role limit 1", 32, pgServer{MaxConnections: 100, Reserved: 3, InUse: 5, RoleLimit: 1},
			[]string{"allows 1 connection (CONNECTION LIMIT)", "raise the role's CONNECTION LIMIT"}},
		{"role limit 0", 32, pgServer{MaxConnections: 100, Reserved: 3, InUse: 5, RoleLimit: 0},
			[]string{"allows 0 connections (CONNECTION LIMIT)", "raise the role's CONNECTION LIMIT"}},
	} {
		msg := sweepOverLimit(c.maxConns, c.srv)
		if msg == "" {
			t.Errorf("%s: --max-conns %d was not refused", c.name, c.maxConns)
			continue
		}
		if m := suggested.FindStringSubmatch(msg); m != nil {
			if _, err := parseFlags("sweep", []string{"--target", "postgres://u@h/db", "--max-conns", m[1]}); err != nil {
				t.Errorf("%s: the advice is a sweep that sweep refuses:\nadvice: %s\nrefused: %v", c.name, msg, err)
			}
		}
		if c.noRoom == nil {
			if !suggested.MatchString(msg) {
				t.Errorf("%s: with room for a sweep, the advice names no --max-conns: %s", c.name, msg)
			}
			continue
		}
		for _, want := range append([]string{"a sweep needs 2"}, c.noRoom...) {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: the advice does not say %q: %s", c.name, want, msg)
			}
		}
	}
}
