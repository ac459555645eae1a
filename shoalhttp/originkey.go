package shoalhttp

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// originKey identifies where connections go: scheme, host and port, as in
// "https://example.com:443", and the proxy they go through, if any. It
// never holds the origin's userinfo, a path or a query; the proxy's
// credentials are in proxy.auth, which String leaves out.
type originKey struct {
	scheme string // "http" or "https"
	host   string // host name or IP literal, lower case, without brackets
	port   string
	proxy  proxyKey // the zero proxyKey for a direct connection
	// h1only: the pool for WebSocket upgrades to an origin that may speak
	// HTTP/2, which offers only HTTP/1.1 (see wantsHTTP1).
	h1only bool
}

// String returns scheme://host:port, the key of Transport.Stats, followed
// by " via " and the proxy's scheme://host:port for a proxied origin, and
// by " (HTTP/1.1 upgrades)" for the pool of WebSocket upgrades to an origin
// that may speak HTTP/2.
func (k originKey) String() string {
	s := k.scheme + "://" + net.JoinHostPort(k.host, k.port)
	if k.proxy.isSet() {
		s += " via " + k.proxy.String()
	}
	if k.h1only {
		s += " (HTTP/1.1 upgrades)"
	}
	return s
}

// forwardProxied reports whether requests go to an HTTP proxy as they are
// (absolute-form request URIs, plain http origins) rather than through a
// CONNECT tunnel (https origins).
func (k originKey) forwardProxied() bool { return k.proxy.isSet() && k.scheme == "http" }

// dialAddr returns host:port of the first hop: the proxy, or the origin.
func (k originKey) dialAddr() string {
	if k.proxy.isSet() {
		return k.proxy.addr()
	}
	return k.addr()
}

// addr returns host:port for dialing.
func (k originKey) addr() string { return net.JoinHostPort(k.host, k.port) }

// originOf returns the origin of a request URL.
func originOf(u *url.URL) (originKey, error) {
	if u == nil {
		return originKey{}, errors.New("request has no URL")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return originKey{}, fmt.Errorf("unsupported protocol scheme %q", u.Scheme)
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return originKey{}, errors.New("URL has no host")
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	return originKey{scheme: scheme, host: host, port: port}, nil
}

// parseOrigin parses an origin written as a URL ("https://host" or
// "http://host:port"); a path, if any, is ignored.
func parseOrigin(raw string) (originKey, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error would repeat raw, which may hold a password.
		return originKey{}, errors.New("origin is not a valid URL")
	}
	return originOf(u)
}
