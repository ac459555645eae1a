package main

import (
	"fmt"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// minSweepConns is the smallest --max-conns sweep takes: with one
// connection there is one configuration and nothing to compare it to.
const minSweepConns = 2

// connLimit is one of the limits on the connections a sweep can open, as
// the preflight read it.
type connLimit struct {
	what   string // the limit and how many it allows, as the advice names it
	allows int
	inUse  int    // connections open now that count against it
	raise  string // what to do when it leaves room for no sweep
}

// room is how many more connections the limit lets the sweep open.
func (l connLimit) room() int { return max(0, l.allows-l.inUse) }

// sweepLimits lists the limits that apply to the preflight's role and
// database, the server's first.
func sweepLimits(srv pgServer) []connLimit {
	server := srv.MaxConnections - srv.Reserved
	limits := []connLimit{{
		what: fmt.Sprintf("the server allows %s (max_connections %d, %d reserved)",
			benchrun.Plural(server, "client connection"), srv.MaxConnections, srv.Reserved),
		allows: server, inUse: srv.InUse,
		raise: "close some of those connections or raise max_connections",
	}}
	if srv.RoleLimit >= 0 {
		limits = append(limits, connLimit{
			what:   fmt.Sprintf("role %q allows %s (CONNECTION LIMIT)", srv.Role, benchrun.Plural(srv.RoleLimit, "connection")),
			allows: srv.RoleLimit, inUse: srv.RoleInUse,
			raise: "close some of the role's connections or raise the role's CONNECTION LIMIT (ALTER ROLE ... CONNECTION LIMIT)",
		})
	}
	if srv.DBLimit >= 0 {
		limits = append(limits, connLimit{
			what:   fmt.Sprintf("database %q allows %s (CONNECTION LIMIT)", srv.Database, benchrun.Plural(srv.DBLimit, "connection")),
			allows: srv.DBLimit, inUse: srv.DBInUse,
			raise: "close some of the database's connections or raise the database's CONNECTION LIMIT (ALTER DATABASE ... CONNECTION LIMIT)",
		})
	}
	return limits
}

// sweepOverLimit says which limit leaves a sweep too little room for
// maxConns connections beside those open now, and what to use or do
// instead, or returns "" when there is room. It reads only what the
// preflight learned, so that its advice can be checked for every limit
// without a server set to each.
func sweepOverLimit(maxConns int, srv pgServer) string {
	limits := sweepLimits(srv)
	// The limit with the least room binds; on a tie the one listed first,
	// as raising either alone would not make room.
	bind := limits[0]
	for _, l := range limits[1:] {
		if l.room() < bind.room() {
			bind = l
		}
	}
	room := bind.room()
	if maxConns <= room {
		return ""
	}
	head := fmt.Sprintf("--max-conns %d: %s, %d of them open now, which leaves room for %d", maxConns, bind.what, bind.inUse, room)
	if room < minSweepConns {
		// --max-conns 1 or 0 would only be refused in turn.
		return fmt.Sprintf("%s, and a sweep needs %d at least: %s", head, minSweepConns, bind.raise)
	}
	return fmt.Sprintf("%s; use --max-conns %d or fewer", head, room)
}
