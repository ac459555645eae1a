package shoalgrpc

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/syncbuf"

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

// TestRedactDecodedTarget: a password with '@', ':' or '/' in it must be
// %-escaped in the target, and grpc-go dials (and net quotes) the target
// decoded; the decoded password is masked in the call's error and in the
// pool's dial-failure log line, where it stands, as the escaped one is. An
// endpoint after a bare scheme ("passthrough:user:pw@host"), which grpc-go
// takes as written, is masked too. The password "a" shows that nothing
// else is masked: "address" and "too many" keep their letters.
func TestRedactDecodedTarget(t *testing.T) {
	// net's words for an address with a ':' in its user information.
	const tooManyColons = "dial tcp: address REDACTED@127.0.0.1:1: too many colons in address"
	for _, c := range []struct {
		target, secret string
		keep           string // what the error must say
	}{
		{"passthrough:///u%3AS3cretPW@127.0.0.1:1", "S3cretPW", tooManyColons},
		{"passthrough:///u:a%2FS3cretPW@127.0.0.1:1", "S3cretPW", tooManyColons},
		{"passthrough:///u%3Aa@127.0.0.1:1", "u:a", tooManyColons},
		{"dns:///u%40S3cretPW@localhost:1", "S3cretPW", "lookup REDACTED@localhost"},
		{"unix:///tmp/u%3AS3cretPW@nosuch.sock", "S3cretPW", "dial unix /REDACTED@nosuch.sock"},
		{"passthrough:user:S3cretPW@127.0.0.1:1", "S3cretPW", tooManyColons},
	} {
		var log syncbuf.Buffer
		p, err := NewClient(c.target, Options{DialTimeout: 2 * time.Second, Logger: slog.New(slog.NewTextHandler(&log, nil))}, insecureCreds())
		if err != nil {
			t.Fatalf("%s: %v", c.target, err)
		}
		err = p.Invoke(testContext(t, 10*time.Second), "/grpc.testing.TestService/EmptyCall", &testpb.Empty{}, &testpb.Empty{})
		shown := p.String()
		if err := p.Close(); err != nil {
			t.Errorf("%s: Close: %v", c.target, err)
		}
		if err == nil {
			t.Fatalf("%s: a call to an address that cannot be dialled succeeded", c.target)
		}
		msg, logged := err.Error(), log.String()
		if strings.Contains(msg, c.secret) || strings.Contains(shown, c.secret) {
			t.Errorf("%s: the password %q shows: %s", c.target, c.secret, msg)
		}
		if !strings.Contains(msg, c.keep) {
			t.Errorf("%s: the error does not say %q: %s", c.target, c.keep, msg)
		}
		if !strings.Contains(logged, "dial failed") {
			t.Errorf("%s: no dial failure logged: %s", c.target, logged)
		} else if strings.Contains(logged, c.secret) {
			t.Errorf("%s: the password %q shows in the log: %s", c.target, c.secret, logged)
		}
	}
}

// TestRedactDecodedPieces: the pieces of a target are masked both as
// written and decoded, and text that merely repeats the password (here
// "x/y") is left alone.
func TestRedactDecodedPieces(t *testing.T) {
	const target = "passthrough:///app%3Ax%2Fy@db.internal:443?token=x"
	p := &Pool{target: target, shownTarget: redactTarget(target), redactor: quotedPieces(target)}
	err := p.redact(errors.New("dial app:x/y@db.internal:443: lookup app:x/y@db.internal: no host; as written app%3Ax%2Fy@db.internal:443; x/y marks the spot"))
	want := "dial REDACTED@db.internal:443: lookup REDACTED@db.internal: no host; as written REDACTED@db.internal:443; x/y marks the spot"
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
