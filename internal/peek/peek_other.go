//go:build !unix

package peek

import "net"

// Peeker has nothing to do on platforms without a non-blocking peek: every
// TLS reports false: nothing is looked at here.
func (p *Peeker) TLS() bool { return false }

// Peek reports Unknown.
type Peeker struct{}

// Init does nothing here.
func (p *Peeker) Init(net.Conn) {}

// TLS reports false: nothing is looked at here.
func (p *Peeker) TLS() bool { return false }

// Peek reports Unknown.
func (p *Peeker) Peek() (Result, byte) { return Unknown, 0 }
