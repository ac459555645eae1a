package shoalhttp

import (
	"errors"
	"net/http"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/tlsfail"
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
	if cause, _ := tlsfail.Classify(err); cause.Permanent() {
		return true
	}
	var proxy *ProxyConnectError
	if errors.As(err, &proxy) {
		return proxy.StatusCode == http.StatusProxyAuthRequired ||
			proxy.StatusCode == http.StatusUnauthorized || proxy.StatusCode == http.StatusForbidden
	}
	return false
}
