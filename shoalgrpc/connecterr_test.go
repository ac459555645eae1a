package shoalgrpc

import (
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/embedded"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// unresolvableHost is a host name that does not resolve, known without
// asking a DNS server: a label longer than 63 bytes is not a domain name,
// and Go's resolver says "no such host" before sending a query.
var unresolvableHost = strings.Repeat("x", 64) + ".example"

// startTLSServer starts an embedded TLS gRPC server (the health service)
// with a certificate of its own, stopped when the test ends.
func startTLSServer(t *testing.T) *embedded.GRPCServer {
	t.Helper()
	cert, err := embedded.NewCert()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := embedded.StartGRPCServer(cert, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// untrustingCreds are TLS credentials that trust a certificate no server
// of the test presents.
func untrustingCreds(t *testing.T) grpc.DialOption {
	t.Helper()
	other, err := embedded.NewCert()
	if err != nil {
		t.Fatal(err)
	}
	return grpc.WithTransportCredentials(credentials.NewTLS(other.ClientTLS()))
}

// TestFailedConnectionSaysWhy: the first call of a pool whose connection
// cannot be made fails with an error that names the target and the cause
// (not only that the connection went to TRANSIENT_FAILURE), with the
// underlying error still reachable through errors.Is and errors.As, and
// codes.Unavailable as grpc-go gives.
func TestFailedConnectionSaysWhy(t *testing.T) {
	tlsSrv := startTLSServer(t)
	for _, c := range []struct {
		name   string
		target string
		opts   Options
		creds  grpc.DialOption
		says   []string
		is     func(error) bool
	}{
		{
			name: "refused", target: "127.0.0.1:1", creds: insecureCreds(),
			says: []string{"connection was refused", "connection refused"},
			is:   func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) },
		},
		{
			// Without the pool's own context dialer the cause comes from
			// grpc-go.
			name: "refused, no pool dialer", target: "127.0.0.1:1", creds: insecureCreds(),
			opts: Options{IgnoreServerStreamLimit: true},
			says: []string{"connection was refused", "connection refused"},
			is:   func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) },
		},
		{
			name: "untrusted certificate", target: tlsSrv.Addr(), creds: untrustingCreds(t),
			says: []string{"server's certificate was rejected", "x509: certificate signed by unknown authority"},
			is: func(err error) bool {
				var ce *tls.CertificateVerificationError
				return errors.As(err, &ce)
			},
		},
		{
			name: "unresolvable host", target: unresolvableHost + ":443", creds: insecureCreds(),
			says: []string{"host name did not resolve", "no such host"},
			is: func(err error) bool {
				var de *net.DNSError
				return errors.As(err, &de) && de.IsNotFound
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.DialTimeout = 5 * time.Second
			p, err := NewClient(c.target, c.opts, c.creds)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			err = p.Invoke(testContext(t, 20*time.Second), "/grpc.testing.TestService/EmptyCall", &testpb.Empty{}, &testpb.Empty{})
			if err == nil {
				t.Fatal("the call succeeded")
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.Contains(msg, "connecting to "+p.Target()+": ") {
				t.Errorf("the error does not name the target %s: %s", p.Target(), msg)
			}
			for _, s := range c.says {
				if !strings.Contains(msg, s) {
					t.Errorf("the error does not say %q: %s", s, msg)
				}
			}
			if strings.Contains(msg, "TRANSIENT_FAILURE") {
				t.Errorf("the error speaks of TRANSIENT_FAILURE instead of the cause: %s", msg)
			}
			if !c.is(err) || !errors.Is(err, shoal.ErrDial) {
				t.Errorf("the cause is not reachable through errors.Is/As: %#v", err)
			}
			if code := status.Code(err); code != codes.Unavailable {
				t.Errorf("code %s, want Unavailable", code)
			}
		})
	}
}
