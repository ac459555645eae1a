package shoalgrpc

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"

	"github.com/shoalpool/shoal/internal/tlsfail"
)

// connectError says why a new connection never became READY: which target
// (without credentials) and, in a few words, the cause, followed by the
// error that shows it. It wraps that error, so errors.As finds the
// *tls.CertificateVerificationError, the *net.DNSError, syscall.ECONNREFUSED
// and the like.
type connectError struct {
	target string // the target, credentials removed
	reason string // the cause in a few words
	shown  error  // the error quoted after the reason
	err    error  // the whole error, for Unwrap
}

func (e *connectError) Error() string {
	return "connecting to " + e.target + ": " + e.reason + ": " + e.shown.Error()
}

func (e *connectError) Unwrap() error { return e.err }

// classify names the cause of a failed connection, picks the error that
// shows it, and says whether trying again can mend it: no retry makes a
// client accept a certificate it rejected, or a server accept a handshake
// it refused.
func classify(err error) (reason string, shown error, permanent bool) {
	var dnsErr *net.DNSError
	switch cause, shownTLS := tlsfail.Classify(err); cause {
	case tlsfail.CertificateRejected:
		return "TLS handshake failed, the server's certificate was rejected", shownTLS, true
	case tlsfail.Refused, tlsfail.Alert:
		return "TLS handshake failed, the server refused it", shownTLS, cause.Permanent()
	case tlsfail.NotTLS:
		return "TLS handshake failed, the server does not speak TLS", shownTLS, true
	}
	switch {
	case errors.As(err, &dnsErr):
		return "the host name did not resolve", err, false
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused", netError(err), false
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return "timed out", netError(err), false
	}
	return "the connection failed before it was ready", err, false
}

// netError returns the *net.OpError inside err, which says what was dialled
// and what the system answered ("dial tcp 127.0.0.1:1: connect: connection
// refused") without grpc-go's quoting around it, or err itself.
func netError(err error) error {
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return opErr
	}
	return err
}

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// lookupFailure looks up the host of a "dns:///host:port" target itself
// when grpc-go's resolver found no address: grpc-go reports only "produced
// zero addresses", not what the DNS answered. It returns nil when the
// target is not such a name or the name resolves; a target naming a DNS
// server of its own (dns://server/host) is left to grpc-go.
func lookupFailure(ctx context.Context, canonicalTarget string) error {
	endpoint, ok := strings.CutPrefix(canonicalTarget, "dns:///")
	if !ok {
		return nil
	}
	host, _, err := net.SplitHostPort(endpoint)
	if err != nil {
		host = endpoint // no port: grpc-go's default, 443
	}
	host = strings.Trim(host, "[]")
	if host == "" || net.ParseIP(host) != nil {
		return nil
	}
	_, err = net.DefaultResolver.LookupHost(ctx, host)
	return err
}
