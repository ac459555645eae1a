package shoalgrpc

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// TestRedactByPosition: credentials are masked where they stand in the
// target, not wherever their text appears in an error. A credential that
// is a common word ("refused", "tcp"), a single letter, or a password
// equal to its user name masks itself and nothing else, so the reason the
// dial failed stays readable.
func TestRedactByPosition(t *testing.T) {
	for _, c := range []struct {
		target, secret string   // secret: the credential with what marks it as one
		keep           []string // what the message must still say
	}{
		{"dns://127.0.0.1:1/127.0.0.1:1?refused", "?refused", []string{"connection refused"}},
		{"dns://127.0.0.1:1/127.0.0.1:1?token=x", "token=x", []string{"connection refused"}},
		{"passthrough:///tcp@127.0.0.1:1", "tcp@", []string{"dial tcp", "REDACTED@127.0.0.1"}},
		{"passthrough:///dial:dial@127.0.0.1:1", "dial:dial", []string{"dial tcp", "REDACTED@127.0.0.1:1"}},
		{"passthrough:///u:x@127.0.0.1:1", "u:x", []string{"dial tcp", "REDACTED@127.0.0.1:1"}},
	} {
		p := newTestPool(t, c.target, Options{DialTimeout: 2 * time.Second})
		err := p.Invoke(testContext(t, 10*time.Second), "/grpc.testing.TestService/EmptyCall", &testpb.Empty{}, &testpb.Empty{})
		if err == nil {
			t.Fatalf("%s: a call to a port nobody listens on succeeded", p.shownTarget)
		}
		msg := err.Error()
		if strings.Contains(msg, c.secret) || strings.Contains(p.String(), c.secret) {
			t.Errorf("%s: the credential %q shows: %s", p.shownTarget, c.secret, msg)
		}
		for _, k := range c.keep {
			if !strings.Contains(msg, k) {
				t.Errorf("%s: the message lost %q: %s", p.shownTarget, k, msg)
			}
		}
	}
}

// TestRedactQuotedPieces: an error that quotes only a piece of the target
// (the endpoint after an empty authority, the host without its port, the
// query) has the credential in that piece masked too.
func TestRedactQuotedPieces(t *testing.T) {
	const target = "passthrough:///app:x@db.internal:443?token=x"
	p := &Pool{target: target, shownTarget: redactTarget(target), redactor: quotedPieces(target)}
	if p.shownTarget != "passthrough:///REDACTED@db.internal:443?REDACTED" {
		t.Errorf("shown target %s", p.shownTarget)
	}
	err := p.redact(errors.New("exceeded: dial app:x@db.internal:443: lookup app:x@db.internal: no host; resolver said ?token=x; x marks the spot"))
	want := "exceeded: dial REDACTED@db.internal:443: lookup REDACTED@db.internal: no host; resolver said ?REDACTED; x marks the spot"
	if err.Error() != want {
		t.Errorf("redacted:\n%s\nwant:\n%s", err, want)
	}
}

// TestErrorSaysEachLayerOnce: a failed dial's error names the package,
// the acquire, the dial and the connection attempt once each, instead of
// "shoalgrpc: shoal: acquire: dial failed: shoalgrpc: connecting to".
// The pool is named once too, by its name (here its target).
func TestErrorSaysEachLayerOnce(t *testing.T) {
	p := newTestPool(t, "127.0.0.1:1", Options{DialTimeout: 2 * time.Second})
	err := p.Invoke(testContext(t, 10*time.Second), "/grpc.testing.TestService/EmptyCall", &testpb.Empty{}, &testpb.Empty{})
	if !errors.Is(err, shoal.ErrDial) {
		t.Fatalf("call to a closed port: %v", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, `shoalgrpc pool "127.0.0.1:1": acquire: dial failed: connecting to 127.0.0.1:1: `) {
		t.Errorf("message starts %q", msg)
	}
	for _, piece := range []string{"shoalgrpc", "shoal:", "acquire", "dial failed", "connecting to"} {
		if n := strings.Count(msg, piece); n > 1 {
			t.Errorf("%q appears %d times: %s", piece, n, msg)
		}
	}
}
