package main

import "fmt"

// sweepOverLimit says why the server or the role cannot give a sweep
// maxConns connections, and what to use instead, or returns "" when they
// can. It reads only what the preflight learned, so that its advice can be
// checked for every limit without a server set to each.
func sweepOverLimit(maxConns int, srv pgServer) string {
	limit := srv.MaxConnections - srv.Reserved
	if maxConns > limit {
		return fmt.Sprintf("--max-conns %d: the server allows %d client connections (max_connections %d, %d reserved), %d of them open now; use --max-conns %d or fewer",
			maxConns, limit, srv.MaxConnections, srv.Reserved, srv.InUse, max(1, limit-srv.InUse))
	}
	if srv.RoleLimit >= 0 && maxConns > srv.RoleLimit {
		return fmt.Sprintf("--max-conns %d: the role allows %d connections (CONNECTION LIMIT); use --max-conns %d or fewer", maxConns, srv.RoleLimit, srv.RoleLimit)
	}
	return ""
}
