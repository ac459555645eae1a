package shoalgrpc

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
)

// transportSecurityCreds are per-call credentials that insist on a secure
// transport, as OAuth tokens do.
type transportSecurityCreds struct{}

func (transportSecurityCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer x"}, nil
}
func (transportSecurityCreds) RequireTransportSecurity() bool { return true }

// TestNewClientRefusesBadDialOptions: what grpc.NewClient refuses,
// shoalgrpc.NewClient refuses at once, with grpc-go's words for the
// problem, instead of failing every call later.
func TestNewClientRefusesBadDialOptions(t *testing.T) {
	for _, c := range []struct {
		name   string
		target string
		opts   []grpc.DialOption
		says   string
	}{
		{"no transport security", "127.0.0.1:1", nil, "no transport security set"},
		{"credentials needing TLS over plaintext", "127.0.0.1:1",
			[]grpc.DialOption{insecureCreds(), grpc.WithPerRPCCredentials(transportSecurityCreds{})},
			"require transport level security"},
		{"a target grpc-go cannot parse", "%zz", []grpc.DialOption{insecureCreds()}, "invalid URL escape"},
		{"a bad default service config", "127.0.0.1:1",
			[]grpc.DialOption{insecureCreds(), grpc.WithDefaultServiceConfig("{")}, "service config is invalid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewClient(c.target, Options{}, c.opts...)
			if err == nil {
				_ = p.Close()
				t.Fatal("NewClient accepted dial options that grpc.NewClient refuses")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "shoalgrpc: NewClient(") || !strings.Contains(msg, c.says) {
				t.Errorf("error does not say what is wrong (%q): %s", c.says, msg)
			}
		})
	}
}

// TestDialOptionCheckConnectsNowhere: judging the dial options opens no
// connection and leaves no goroutine behind, and neither does a pool that
// is made and closed without a call.
func TestDialOptionCheckConnectsNowhere(t *testing.T) {
	srv := startTestServer(t, 100)
	var dials atomic.Int32
	dialer := grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	})
	ignore := goleak.IgnoreCurrent()
	if _, err := checkDialOptions(srv.addr, []grpc.DialOption{insecureCreds(), dialer}); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, ignore)
	p, err := NewClient(srv.addr, Options{}, insecureCreds(), dialer)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, ignore)
	// Every goroutine a dial would run has ended, so a dial would have
	// been counted by now.
	if n := dials.Load(); n != 0 {
		t.Errorf("checking the options dialled the server %d times", n)
	}
}
