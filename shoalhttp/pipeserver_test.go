package shoalhttp

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/shoalpool/shoal/internal/selfsigned"
)

// pipeServer is an https server on in-memory connections, for tests in a
// synctest bubble: a goroutine blocked on a real socket is not durably
// blocked, and would keep the bubble's clock from moving. Made in the
// bubble, its certificate is valid on the bubble's clock; it is closed
// before the bubble ends.
type pipeServer struct {
	// URL is the origin's: any address, since dial connects every
	// connection to the server.
	URL string
	// TLS is the client's configuration, which trusts the certificate.
	TLS *tls.Config

	srv   *http.Server
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// newPipeServer starts h over HTTP/2 when h2, over HTTP/1.1 alone
// otherwise, and closes the server when t's test ends.
func newPipeServer(t *testing.T, h http.Handler, h2 bool) *pipeServer {
	t.Helper()
	cert, err := selfsigned.New()
	if err != nil {
		t.Fatal(err)
	}
	s := &pipeServer{URL: "https://127.0.0.1:443", TLS: cert.ClientTLS(),
		conns: make(chan net.Conn), done: make(chan struct{})}
	s.srv = &http.Server{Handler: h, TLSConfig: cert.ServerTLS(), Protocols: new(http.Protocols)}
	s.srv.Protocols.SetHTTP1(true)
	s.srv.Protocols.SetHTTP2(h2)
	go s.srv.ServeTLS(s, "", "")
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// dial is an Options.DialContext (and an http.Transport's) that connects
// to the server whatever the address.
func (s *pipeServer) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case s.conns <- server:
		return client, nil
	case <-s.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Accept, Close and Addr make the server its own net.Listener.
func (s *pipeServer) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.done:
		return nil, net.ErrClosed
	}
}

func (s *pipeServer) Close() error {
	s.once.Do(func() { close(s.done) })
	return nil
}

func (s *pipeServer) Addr() net.Addr { return pipeAddr{} }

// pipeAddr is the address of both ends of a pipeServer's connections.
type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }
