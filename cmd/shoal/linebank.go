package main

import (
	"context"
	"sync"
	"time"

	"github.com/shoalpool/shoal/internal/embedded"
)

// lineBank keeps open line-server connections between the cases of the
// partitions sweep. Each configuration's pool takes its connections from
// the bank instead of dialling, and gives them back when it closes, so that
// the sweep spends its time measuring checkout rather than doing 64 TLS
// handshakes per configuration. Dials are never measured either way.
type lineBank struct {
	addr string
	work time.Duration
	env  *env

	mu   sync.Mutex
	idle []*embedded.LineConn
}

// newLineBank returns a bank of connections to the embedded line server;
// it closes its connections when the servers close.
func newLineBank(e *env, work time.Duration) *lineBank {
	b := &lineBank{addr: e.servers.Line.Addr(), work: work, env: e}
	e.servers.OnClose(b.closeAll)
	return b
}

// dial takes a banked connection, or dials a new one.
func (b *lineBank) dial(ctx context.Context) (*embedded.LineConn, error) {
	b.mu.Lock()
	if n := len(b.idle); n > 0 {
		c := b.idle[n-1]
		b.idle = b.idle[:n-1]
		b.mu.Unlock()
		return c, nil
	}
	b.mu.Unlock()
	return embedded.DialLine(ctx, b.addr, b.env.servers.Cert.ClientTLS(), b.work)
}

// put banks a connection a pool closes, unless it is broken.
func (b *lineBank) put(c *embedded.LineConn) error {
	if c.Err() != nil {
		return c.Close()
	}
	b.mu.Lock()
	b.idle = append(b.idle, c)
	b.mu.Unlock()
	return nil
}

// closeAll closes the banked connections.
func (b *lineBank) closeAll() error {
	b.mu.Lock()
	idle := b.idle
	b.idle = nil
	b.mu.Unlock()
	for _, c := range idle {
		c.Close()
	}
	return nil
}
