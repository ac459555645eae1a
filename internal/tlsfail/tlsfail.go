// Package tlsfail tells apart the TLS failures that no retry can mend: a
// certificate the client rejects, a handshake the server refuses as the
// client is configured, TLS spoken to a server that does not speak it. The
// adapters (shoalpgx, shoalhttp, shoalgrpc) mark such dial errors with
// shoal.Permanent; it is kept here once so that they agree.
package tlsfail

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
)

// Cause is what a TLS failure was.
type Cause int

// The causes Classify tells apart.
const (
	// None: err is no TLS failure that Classify knows.
	None Cause = iota
	// CertificateRejected: this side rejected the server's certificate
	// (unknown authority, wrong name, expired).
	CertificateRejected
	// Refused: the server sent an alert that refuses the handshake as this
	// client offers it (a certificate it rejects or wants, a protocol or
	// cipher it will not speak); the same handshake gets the same answer.
	Refused
	// Alert: the server sent another alert (internal_error, say), which
	// may pass.
	Alert
	// NotTLS: the server answered with something that is not TLS.
	NotTLS
)

// Permanent reports whether no retry can mend the failure.
func (c Cause) Permanent() bool { return c == CertificateRejected || c == Refused || c == NotTLS }

// refusals are the alerts a server sends when it will not accept this
// client as it is configured.
var refusals = []tls.AlertError{
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

// Classify says what TLS failure err is, and returns the error in it that
// shows the cause best.
func Classify(err error) (Cause, error) {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		alert    tls.AlertError
		opErr    *net.OpError
		header   tls.RecordHeaderError
	)
	switch {
	case err == nil:
		return None, nil
	case errors.As(err, &verify):
		return CertificateRejected, verify
	case errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &invalid):
		// A VerifyPeerCertificate or VerifyConnection of the caller's that
		// returns x509's errors itself.
		return CertificateRejected, err
	case errors.As(err, &alert):
		// An alert crypto/tls reports as it is (this side's, or QUIC's).
		return alertCause(alert), err
	case errors.As(err, &opErr) && opErr.Op == "remote error" && opErr.Err != nil:
		// crypto/tls reports an alert from the peer as a *net.OpError
		// "remote error" around an unexported type whose text is the
		// alert's own.
		for _, a := range refusals {
			if opErr.Err.Error() == a.Error() {
				return Refused, opErr
			}
		}
		return Alert, opErr
	case errors.As(err, &header):
		return NotTLS, err
	}
	return None, err
}

func alertCause(a tls.AlertError) Cause {
	for _, r := range refusals {
		if a == r {
			return Refused
		}
	}
	return Alert
}
