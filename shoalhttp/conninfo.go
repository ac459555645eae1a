package shoalhttp

import (
	"crypto/tls"
	"net"
)

// ConnInfo describes a connection to Options.OnConnect and
// Options.OnDisconnect. Through a proxy, RemoteAddr is the proxy's, and TLS
// is the connection's own: the origin's for https (end to end through the
// tunnel), the proxy's for a plain-http origin behind an https proxy.
type ConnInfo struct {
	Origin     string               // scheme://host:port
	Protocol   string               // "HTTP/1.1" or "HTTP/2.0"
	LocalAddr  net.Addr             // the client's end
	RemoteAddr net.Addr             // the server's end: the proxy's, through one
	TLS        *tls.ConnectionState // nil for a connection without TLS
}

const (
	protoHTTP1 = "HTTP/1.1"
	protoHTTP2 = "HTTP/2.0"
)

// newConnInfo fills a ConnInfo for nc, a connection to origin.
func newConnInfo(origin, proto string, nc net.Conn) ConnInfo {
	info := ConnInfo{Origin: origin, Protocol: proto, LocalAddr: nc.LocalAddr(), RemoteAddr: nc.RemoteAddr()}
	if tc, ok := nc.(*tls.Conn); ok {
		st := tc.ConnectionState()
		info.TLS = &st
	}
	return info
}
