package shoalhttp

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/selfsigned"
)

// A TLS 1.3 server's refusal of the client's certificate is read even
// when the client's very first HTTP/2 write, its preface, fails: here the
// server resets the connection after its alert, before the client writes
// anything, so the preface meets the reset. x/net closes a connection
// whose preface it could not write, before its read loop has started.
func TestTLS13RefusalSurvivesAFailedPreface(t *testing.T) {
	cert, err := selfsigned.New()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	reset := make(chan struct{})
	go func() {
		defer close(reset)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		cfg := cert.ServerTLS()
		cfg.MinVersion, cfg.ClientAuth, cfg.NextProtos = tls.VersionTLS13, tls.RequireAnyClientCert, []string{"h2"}
		_ = tls.Server(c, cfg).Handshake() // fails, sending certificate_required
		_ = c.(*net.TCPConn).SetLinger(0)  // a reset rather than a FIN: the client's next write fails
		c.Close()
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	cfg := cert.ClientTLS()
	cfg.MinVersion, cfg.NextProtos = tls.VersionTLS13, []string{"h2"}
	tc := tls.Client(nc, cfg)
	if err := tc.Handshake(); err != nil { // over on the client's side before the server judges it
		t.Fatal(err)
	}
	<-reset
	tr := newTestTransport(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := newH2Conn(ctx, tr.h2, "https://"+ln.Addr().String(), tc, 0)
	if err == nil {
		c.close()
		t.Fatal("HTTP/2 started on a connection the server refused")
	}
	if !strings.Contains(err.Error(), "certificate required") || !permanent(err) {
		t.Fatalf("%v: want the server's certificate_required alert, permanent", err)
	}
}
