//go:build !unix

package peek

import "net"

// Peeker has nothing to do on platforms without a non-blocking peek: every
// Peek reports Unknown.
type Peeker struct{}

// Init does nothing here.
func (p *Peeker) Init(net.Conn) {}

// Peek reports Unknown.
func (p *Peeker) Peek() (Result, byte) { return Unknown, 0 }
