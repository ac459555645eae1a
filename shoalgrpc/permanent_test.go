package shoalgrpc

import (
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/embedded"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// startClientCertServer starts a TLS gRPC server on loopback that requires
// a client certificate signed by its own, stopped when the test ends, and
// returns its address and TLS credentials that trust it but present no
// certificate. It speaks TLS 1.2, where the server refuses the client
// during the handshake, so the client always reads the server's alert. In
// TLS 1.3 the client's handshake is over before the server looks at its
// certificate, and the alert races the client's first write: grpc-go (and
// so the pool) then sees either the alert or a broken pipe.
func startClientCertServer(t *testing.T) (string, grpc.DialOption) {
	t.Helper()
	cert, err := embedded.NewCert()
	if err != nil {
		t.Fatal(err)
	}
	cfg := cert.ServerTLS()
	cfg.ClientAuth = tls.RequireAndVerifyClientCert
	cfg.ClientCAs = cert.Pool
	cfg.MaxVersion = tls.VersionTLS12
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(cfg)))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return l.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(cert.ClientTLS()))
}

// TestPermanentConnectErrors: a failure no retry can mend (a certificate
// the client rejects, a handshake the server refuses for want of a client
// certificate) is marked shoal.ErrPermanent, so the core pool fails calls
// at once and backs off for seconds; a refused connection or a name that
// does not resolve, which a retry may find mended, is not.
func TestPermanentConnectErrors(t *testing.T) {
	tlsSrv := startTLSServer(t)
	certSrv, noClientCert := startClientCertServer(t)
	for _, c := range []struct {
		name      string
		target    string
		creds     grpc.DialOption
		says      string
		permanent bool
	}{
		{"untrusted certificate", tlsSrv.Addr(), untrustingCreds(t), "server's certificate was rejected", true},
		{"no client certificate", certSrv, noClientCert, "the server refused it: remote error: tls: ", true},
		{"refused", "127.0.0.1:1", insecureCreds(), "connection was refused", false},
		{"unresolvable host", unresolvableHost + ":443", insecureCreds(), "did not resolve", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewClient(c.target, Options{DialTimeout: 5 * time.Second}, c.creds)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			_, err = healthpb.NewHealthClient(p).Check(testContext(t, 20*time.Second), &healthpb.HealthCheckRequest{})
			if err == nil {
				t.Fatal("the call succeeded")
			}
			t.Log(err)
			if !strings.Contains(err.Error(), c.says) {
				t.Errorf("the error does not say %q: %v", c.says, err)
			}
			if got := errors.Is(err, shoal.ErrPermanent); got != c.permanent {
				t.Errorf("errors.Is(err, shoal.ErrPermanent) = %t, want %t: %v", got, c.permanent, err)
			}
		})
	}
}
