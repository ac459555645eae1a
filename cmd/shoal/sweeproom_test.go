package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestSweepAdviceIsASweepTheToolRuns: when the server, the role or the
// database has room for fewer than the 2 connections a sweep needs, the
// advice says so and what to raise, rather than a --max-conns that sweep
// refuses; any --max-conns it does suggest is one sweep's flags accept.
//
// It tests sweepOverLimit on the limits the preflight reads rather than a
// sweep against a server: the test role may not change its own CONNECTION
// LIMIT nor make a role or a database with one, and filling the shared server's max_connections, or lowering
// shoal_test's, would refuse the connections of every other test running.
func TestSweepAdviceIsASweepTheToolRuns(t *testing.T) {
	suggested := regexp.MustCompile(`use --max-conns (\d+) or fewer`)
	for _, c := range []struct {
		name     string
		maxConns int
		srv      pgServer
		noRoom   []string // what the advice names when there is no room; nil when there is
	}{
		{"server with room for 2", 128, pgServer{MaxConnections: 100, Reserved: 3, InUse: 95, RoleLimit: -1, DBLimit: -1}, nil},
		{"server with room for 1", 128, pgServer{MaxConnections: 100, Reserved: 3, InUse: 96, RoleLimit: -1, DBLimit: -1},
			[]string{"room for 1", "close some", "raise max_connections"}},
		{"full server", 128, pgServer{MaxConnections: 100, Reserved: 3, InUse: 97, RoleLimit: -1, DBLimit: -1},
			[]string{"room for 0", "close some", "raise max_connections"}},
		{"server over its limit", 128, pgServer{MaxConnections: 100, Reserved: 3, InUse: 99, RoleLimit: -1, DBLimit: -1},
			[]string{"room for 0", "close some", "raise max_connections"}},
		{"role limit 2", 32, pgServer{MaxConnections: 100, Reserved: 3, InUse: 5, Role: "app", RoleLimit: 2, DBLimit: -1}, nil},
		{"role limit 1", 32, pgServer{MaxConnections: 100, Reserved: 3, InUse: 5, Role: "app", RoleLimit: 1, DBLimit: -1},
			[]string{"allows 1 connection (CONNECTION LIMIT)", "raise the role's CONNECTION LIMIT"}},
		{"role limit 0", 32, pgServer{MaxConnections: 100, Reserved: 3, InUse: 5, Role: "app", RoleLimit: 0, DBLimit: -1},
			[]string{"allows 0 connections (CONNECTION LIMIT)", "raise the role's CONNECTION LIMIT"}},
		{"database limit 2", 32, pgServer{MaxConnections: 100, Reserved: 3, InUse: 5, RoleLimit: -1, Database: "db", DBLimit: 2}, nil},
		{"database limit 1", 32, pgServer{MaxConnections: 100, Reserved: 3, InUse: 5, RoleLimit: -1, Database: "db", DBLimit: 1},
			[]string{"allows 1 connection (CONNECTION LIMIT)", "raise the database's CONNECTION LIMIT"}},
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

// TestSweepRoleRoomLeavesOutItsConnections: a role's CONNECTION LIMIT
// leaves room for what it allows less the role's connections open now,
// and the advice names the role's limit as the one that binds.
func TestSweepRoleRoomLeavesOutItsConnections(t *testing.T) {
	srv := func(roleInUse int) pgServer {
		return pgServer{MaxConnections: 100, Reserved: 3, InUse: 20, Role: "app", RoleLimit: 10, RoleInUse: roleInUse, DBLimit: -1}
	}
	for _, c := range []struct {
		maxConns, roleInUse int
		want                []string // nil: not refused
	}{
		{4, 6, nil},
		{5, 6, []string{`role "app" allows 10 connections (CONNECTION LIMIT), 6 of them open now, which leaves room for 4`, "use --max-conns 4 or fewer"}},
		{2, 9, []string{`role "app" allows 10 connections (CONNECTION LIMIT), 9 of them open now, which leaves room for 1`,
			"a sweep needs 2 at least", "close some of the role's connections", "raise the role's CONNECTION LIMIT"}},
		{2, 12, []string{"12 of them open now, which leaves room for 0", "raise the role's CONNECTION LIMIT"}},
	} {
		msg := sweepOverLimit(c.maxConns, srv(c.roleInUse))
		if c.want == nil {
			if msg != "" {
				t.Errorf("--max-conns %d, the role's limit 10 with %d open: refused: %s", c.maxConns, c.roleInUse, msg)
			}
			continue
		}
		for _, want := range c.want {
			if !strings.Contains(msg, want) {
				t.Errorf("--max-conns %d, the role's limit 10 with %d open: the advice does not say %q: %q", c.maxConns, c.roleInUse, want, msg)
			}
		}
	}
}

// TestSweepDatabaseLimitBinds: a database's CONNECTION LIMIT leaves room
// for what it allows less the database's connections open now, and when
// that is the least room of the server's, the role's and the database's,
// the advice names the database's limit and what to raise.
func TestSweepDatabaseLimitBinds(t *testing.T) {
	srv := func(dbLimit, dbInUse int) pgServer {
		return pgServer{MaxConnections: 100, Reserved: 3, InUse: 40, Role: "app", RoleLimit: 30, RoleInUse: 10,
			Database: "shop", DBLimit: dbLimit, DBInUse: dbInUse}
	}
	for _, c := range []struct {
		maxConns, dbLimit, dbInUse int
		want                       []string // nil: not refused
	}{
		{6, 10, 4, nil},
		{7, 10, 4, []string{`database "shop" allows 10 connections (CONNECTION LIMIT), 4 of them open now, which leaves room for 6`, "use --max-conns 6 or fewer"}},
		{2, 1, 0, []string{`database "shop" allows 1 connection (CONNECTION LIMIT), 0 of them open now, which leaves room for 1`,
			"a sweep needs 2 at least", "close some of the database's connections", "raise the database's CONNECTION LIMIT (ALTER DATABASE"}},
		// The role's limit leaves 20, less than the database's 25.
		{21, 30, 5, []string{`role "app" allows 30 connections`, "use --max-conns 20 or fewer"}},
	} {
		msg := sweepOverLimit(c.maxConns, srv(c.dbLimit, c.dbInUse))
		if c.want == nil {
			if msg != "" {
				t.Errorf("--max-conns %d, the database's limit %d with %d open: refused: %s", c.maxConns, c.dbLimit, c.dbInUse, msg)
			}
			continue
		}
		for _, want := range c.want {
			if !strings.Contains(msg, want) {
				t.Errorf("--max-conns %d, the database's limit %d with %d open: the advice does not say %q: %q", c.maxConns, c.dbLimit, c.dbInUse, want, msg)
			}
		}
	}
}
