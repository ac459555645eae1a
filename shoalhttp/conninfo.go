package shoalhttp

import (
	"crypto/tls"
	"net"
)

// ConnInfo describes a connection to Options.OnConnect and
// Options.OnDisconnect.
type ConnInfo struct {
	Origin     string               // scheme://host:port
	Protocol   string               // "HTTP/1.1" or "HTTP/2.0"
	LocalAddr  net.Addr             // the client's end
	RemoteAddr net.Addr             // the server's end
	TLS        *tls.ConnectionState // nil for plain http
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
