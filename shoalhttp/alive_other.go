//go:build !unix

package shoalhttp

// idleAlive reports whether an idle connection still looks usable. Without
// a non-blocking peek on this platform it trusts the connection unless
// stray bytes were buffered; a dead one is then caught by the retry rule.
func (c *h1Conn) idleAlive() bool { return c.br.Buffered() == 0 }
