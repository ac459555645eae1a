package shoalhttp

import "github.com/shoalpool/shoal/internal/peek"

// idleAlive reports whether an idle connection still looks usable: the
// server has not closed it and has sent nothing unasked (an HTTP/1.1 server
// speaks only to answer, so stray bytes mean a "408 Request Timeout" or
// garbage). Where the platform cannot peek, the connection is trusted and a
// dead one is caught by the retry rule.
func (c *h1Conn) idleAlive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	switch res, _ := c.peek.Peek(); res {
	case peek.Closed:
		return false
	case peek.Data:
		// Over TLS, bytes may be a post-handshake message such as a
		// session ticket; only plain text is known to be wrong.
		return c.peek.TLS()
	}
	return true
}
