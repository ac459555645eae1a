// Package peek looks at an idle connection without blocking and without a
// goroutine per connection: one recv with MSG_PEEK|MSG_DONTWAIT tells a
// quiet connection from one the server closed or reset, or one with bytes
// waiting that nobody asked for. The adapters use it before handing out a
// connection that sat idle, so that a connection the server dropped is
// replaced instead of failing the caller's request.
package peek

// Result is what a peek saw.
type Result int

const (
	// Unknown: this connection or platform cannot be peeked at.
	Unknown Result = iota
	// Quiet: open, nothing to read.
	Quiet
	// Closed: the peer closed (EOF) or reset the connection.
	Closed
	// Data: bytes are waiting; Peek returns the first.
	Data
)
