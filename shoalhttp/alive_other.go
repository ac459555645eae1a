//go:build !unix

package shoalhttp

import "net"

// peeker has nothing to do on platforms without a non-blocking peek.
type peeker struct{}

func (p *peeker) init(net.Conn) {}

// idleAlive reports whether an idle connection still looks usable. Without
// a non-blocking peek on this platform it trusts the connection unless
// stray bytes were buffered; a dead one is then caught by the retry rule.
func (c *h1Conn) idleAlive() bool { return c.br.Buffered() == 0 }
