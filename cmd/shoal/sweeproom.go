package main

import (
	"fmt"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// minSweepConns is the smallest --max-conns sweep takes: with one
// connection there is one configuration and nothing to compare it to.
const minSweepConns = 2

// sweepOverLimit says why the server or the role cannot give a sweep
// maxConns connections, and what to use instead, or returns "" when they
// can. It reads only what the preflight learned, so that its advice can be
// checked for every limit without a server set to each.
func sweepOverLimit(maxConns int, srv pgServer) string {
	limit := srv.MaxConnections - srv.Reserved
	// What others hold now is not free, though max_connections is above
	// --max-conns: the sweep's largest pool would be refused part way.
	if room := max(0, limit-srv.InUse); maxConns > room {
		head := fmt.Sprintf("--max-conns %d: the server allows %d client connections (max_connections %d, %d reserved), %d of them open now, which leaves room for %d",
			maxConns, limit, srv.MaxConnections, srv.Reserved, srv.InUse, room)
		if room < minSweepConns {
			// --max-conns 1 or 0 would only be refused in turn.
			return fmt.Sprintf("%s, and a sweep needs %d at least: close some of those connections or raise max_connections",
				head, minSweepConns)
		}
		return fmt.Sprintf("%s; use --max-conns %d or fewer", head, room)
	}
	if srv.RoleLimit >= 0 && maxConns > srv.RoleLimit {
		head := fmt.Sprintf("--max-conns %d: the role allows %s (CONNECTION LIMIT)", maxConns, benchrun.Plural(srv.RoleLimit, "connection"))
		if srv.RoleLimit < minSweepConns {
			return fmt.Sprintf("%s, and a sweep needs %d at least: raise the role's CONNECTION LIMIT (ALTER ROLE ... CONNECTION LIMIT)",
				head, minSweepConns)
		}
		return fmt.Sprintf("%s; use --max-conns %d or fewer", head, srv.RoleLimit)
	}
	return ""
}
