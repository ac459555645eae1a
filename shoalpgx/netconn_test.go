package shoalpgx

import (
	"crypto/tls"
	"net"
	"testing"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// The pool wraps the socket under each connection, beneath TLS, and the
// wrapper gives the socket up: PgConn().Conn() of a plain-text connection
// is not the *net.TCPConn but has a NetConn method that returns it, for
// code that sets socket options; over TLS it is the *tls.Conn, whose
// NetConn leads to the same. docs/postgres.md promises both.
func TestSocketUnderTheWrapperIsReachable(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		name := "plain"
		if useTLS {
			name = "TLS"
		}
		t.Run(name, func(t *testing.T) {
			p := newTestPool(t, func(c *Config) {
				c.MaxConns = 1
				if useTLS {
					// The test server's certificate is Debian's
					// self-signed one: encryption is what is tested.
					c.ConnConfig.TLSConfig = &tls.Config{InsecureSkipVerify: true}
					c.ConnConfig.Fallbacks = nil
				}
			})
			c, err := p.Acquire(pgtest.Ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Release()
			nc := c.Conn().PgConn().Conn()
			if _, isTLS := nc.(*tls.Conn); isTLS != useTLS {
				t.Fatalf("PgConn().Conn() is a %T, want a *tls.Conn: %v", nc, useTLS)
			}
			if _, isTCP := nc.(*net.TCPConn); isTCP {
				t.Fatalf("PgConn().Conn() is the bare %T: the pool's wrapper is missing", nc)
			}
			for range 4 { // through TLS, then the pool's wrapper
				u, ok := nc.(interface{ NetConn() net.Conn })
				if !ok {
					break
				}
				nc = u.NetConn()
			}
			if _, isTCP := nc.(*net.TCPConn); !isTCP {
				t.Errorf("NetConn leads to a %T, want the *net.TCPConn", nc)
			}
		})
	}
}
