package shoalgrpc

import (
	"strings"
	"testing"
	"time"

	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// TestRedactKeepsTheScheme guards the scheme of a target without "//"
// ("passthrough:user:pw@host:port"): grpc-go reads it as the scheme, so it
// is no credential and stays in Target, String and errors, while a first
// word grpc-go has no resolver for is user information and is masked.
func TestRedactKeepsTheScheme(t *testing.T) {
	for _, c := range []struct{ target, shown string }{
		{"passthrough:app:S3cretPW@127.0.0.1:1", "passthrough:REDACTED@127.0.0.1:1"},
		{"unix:run/app:S3cretPW@nosuch.sock", "unix:REDACTED@nosuch.sock"},
		{"app:S3cretPW@127.0.0.1:1", "REDACTED@127.0.0.1:1"},
	} {
		p := newTestPool(t, c.target, Options{DialTimeout: 2 * time.Second})
		if got := p.Target(); got != c.shown {
			t.Errorf("%s: Target() = %q, want %q", c.target, got, c.shown)
		}
		if s := p.String(); !strings.Contains(s, "("+c.shown+",") {
			t.Errorf("%s: String() = %q, want the target shown as %q", c.target, s, c.shown)
		}
		err := p.Invoke(testContext(t, 10*time.Second), "/grpc.testing.TestService/EmptyCall", &testpb.Empty{}, &testpb.Empty{})
		if err == nil {
			t.Fatalf("%s: a call to an address that cannot be dialled succeeded", c.target)
		}
		if msg := err.Error(); strings.Contains(msg, "S3cretPW") || !strings.Contains(msg, "connecting to "+c.shown+": ") {
			t.Errorf("%s: the error does not say %q without the password: %s", c.target, "connecting to "+c.shown, msg)
		}
	}
}
