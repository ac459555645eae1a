package shoalhttp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"

	"github.com/shoalpool/shoal"
)

// markPermanent marks a dial's error that no retry can mend (shoal.Permanent),
// so that the origin's pool fails its requests at once and retries every few
// seconds instead of four times a second: a certificate the client rejects,
// a TLS handshake the server refuses (a client certificate it wants, a
// protocol it will not speak), TLS spoken to a server that does not speak it,
// and a proxy that wants credentials it was not given or refused them.
func markPermanent(err error) error {
	if permanent(err) {
		return shoal.Permanent(err)
	}
	return err
}

func permanent(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		alert    tls.AlertError
		header   tls.RecordHeaderError
		proxy    *ProxyConnectError
	)
	switch {
	case errors.As(err, &verify), errors.As(err, &unknown), errors.As(err, &hostname),
		errors.As(err, &invalid), errors.As(err, &alert), errors.As(err, &header):
		return true
	case errors.As(err, &proxy):
		return proxy.StatusCode == http.StatusProxyAuthRequired ||
			proxy.StatusCode == http.StatusUnauthorized || proxy.StatusCode == http.StatusForbidden
	}
	return false
}
