package shoalpgx

import "github.com/shoalpool/shoal/shoalpgx/internal/bridge"

// init tells shoalpgx/stdlib (internal/bridge) what it must know of a
// connection it holds and cannot see through the exported API: database/sql
// passes a connection from caller to caller without giving it back, and
// what the pool does to its connections at a release must still happen.
func init() {
	// A Reset, which a failover relies on to end every session on the old
	// server, must reach those connections too.
	bridge.Retired = func(conn any) bool { return conn.(*Conn).pc.stale() != 0 }
	// A write refused as read-only inside a transaction is judged at the
	// release (noteErr): a fenced primary's refusals would otherwise go on
	// for as long as database/sql hands the connection on.
	bridge.Refused = func(conn any) bool { return conn.(*Conn).pc.refused }
}
