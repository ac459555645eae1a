package shoal

import "time"

// HostStat is what a pool whose connections go to several servers (an
// adapter's: shoalpgx with several hosts in its connection string) knows of
// one of them. shoalprom and shoalotel export these per host when a pool's
// metrics are given a source of them (AttachHosts).
type HostStat struct {
	// Addr is the server's address as the pool's configuration names it,
	// such as host:port.
	Addr string
	// Open is the number of the pool's connections open to the server.
	Open int
	// Role is what the server was found to be at LastCheck, in the
	// adapter's words (shoalpgx: "primary", "read-only", "standby" or
	// "unknown").
	Role string
	// Lag is how far the server is behind the one it replicates, at
	// LastCheck; 0 for a server that replicates nothing.
	Lag time.Duration
	// LastCheck is when Role and Lag were read; zero for never.
	LastCheck time.Time
	// LastError is why the last dial to the server failed, without
	// passwords, or "" when the last dial worked.
	LastError string
}
