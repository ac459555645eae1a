package shoalgrpc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"syscall"
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

// TLS alerts a server sends when it will not accept this client as it is
// configured: a certificate it rejects or that is missing, a protocol or
// cipher it does not accept, no HTTP/2 (ALPN). Sending the same handshake
// again gets the same answer. internal_error and the rest may pass.
var permanentAlerts = []tls.AlertError{
	40,  // handshake_failure
	42,  // bad_certificate
	43,  // unsupported_certificate
	44,  // certificate_revoked
	45,  // certificate_expired
	46,  // certificate_unknown
	48,  // unknown_ca
	49,  // access_denied
	70,  // protocol_version
	71,  // insufficient_security
	116, // certificate_required
	120, // no_application_protocol
}

// classify names the cause of a failed connection, picks the error that
// shows it, and says whether trying again can mend it: no retry makes a
// client accept a certificate it rejected, or a server accept a handshake
// it refused.
func classify(err error) (reason string, shown error, permanent bool) {
	var (
		certErr  *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		alert    tls.AlertError
		opErr    *net.OpError
		recErr   tls.RecordHeaderError
		dnsErr   *net.DNSError
	)
	switch {
	case errors.As(err, &certErr):
		return "TLS handshake failed, the server's certificate was rejected", certErr, true
	case errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &invalid):
		// A VerifyPeerCertificate or VerifyConnection of the caller's
		// that returns x509's errors itself.
		return "TLS handshake failed, the server's certificate was rejected", err, true
	case errors.As(err, &alert):
		// An alert this side sent, where crypto/tls reports it so (QUIC).
		return "TLS handshake failed", err, true
	case errors.As(err, &opErr) && opErr.Op == "remote error":
		// crypto/tls reports an alert from the peer as a *net.OpError
		// "remote error" around the alert, whose text is AlertError's.
		permanent := false
		for _, a := range permanentAlerts {
			if opErr.Err != nil && opErr.Err.Error() == a.Error() {
				permanent = true
			}
		}
		return "TLS handshake failed, the server refused it", opErr, permanent
	case errors.As(err, &recErr):
		return "TLS handshake failed, the server does not speak TLS", err, true
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
