package shoalhttp

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpproxy"
)

// NoProxy is an Options.Proxy that sends every request straight to its
// origin, ignoring HTTP_PROXY, HTTPS_PROXY and NO_PROXY: what an
// http.Transport with a nil Proxy does.
func NoProxy(*http.Request) (*url.URL, error) { return nil, nil }

// proxyFunc returns how the Transport picks a request's proxy: opts.Proxy,
// or the environment's settings read now, as http.ProxyFromEnvironment
// reads them (on the same x/net code). nil means every request goes
// direct, which skips the per-request call when no proxy is configured.
func proxyFunc(opts Options) func(*http.Request) (*url.URL, error) {
	if opts.Proxy != nil {
		return opts.Proxy
	}
	cfg := httpproxy.FromEnvironment()
	if cfg.HTTPProxy == "" && cfg.HTTPSProxy == "" {
		return nil // NO_PROXY alone sends nothing anywhere but direct
	}
	pf := cfg.ProxyFunc()
	// Its only error is the refusal of HTTP_PROXY in a CGI program, which
	// quotes no setting. A setting that does not parse is ignored (the
	// request goes direct), as with http.ProxyFromEnvironment.
	return func(req *http.Request) (*url.URL, error) { return pf(req.URL) }
}

// proxyKey is where a request's connections go first: an HTTP proxy, with
// the credentials it is given. The zero proxyKey means none.
type proxyKey struct {
	scheme string // "http" or "https": how the client talks to the proxy
	host   string // lower case, without brackets
	port   string
	auth   string // the Proxy-Authorization value, "" without userinfo
}

func (p proxyKey) isSet() bool { return p.host != "" }

// String names the proxy without its credentials, for errors, logs and
// Stats keys.
func (p proxyKey) String() string {
	return p.scheme + "://" + net.JoinHostPort(p.host, p.port)
}

// addr returns host:port for dialing.
func (p proxyKey) addr() string { return net.JoinHostPort(p.host, p.port) }

// id is the proxy and its credentials in one string, to key the
// Transport's map of origins: never shown.
func (p proxyKey) id() string {
	if !p.isSet() {
		return ""
	}
	return p.String() + " " + p.auth
}

// proxyKeyOf checks a proxy URL returned by Options.Proxy and turns it into
// a proxyKey. Errors name the proxy without its userinfo.
func proxyKeyOf(u *url.URL) (proxyKey, error) {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return proxyKey{}, fmt.Errorf("proxy URL %q has no host", redactedProxy(u))
	}
	if scheme != "http" && scheme != "https" {
		return proxyKey{}, fmt.Errorf("proxy %s: unsupported proxy scheme %q (http and https proxies are supported; dial a SOCKS proxy with Options.DialContext)", redactedProxy(u), u.Scheme)
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	k := proxyKey{scheme: scheme, host: host, port: port}
	if u.User != nil {
		pw, _ := u.User.Password()
		k.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw))
	}
	return k, nil
}

// redactedProxy writes a proxy URL as scheme://host, without userinfo.
func redactedProxy(u *url.URL) string {
	return u.Scheme + "://" + u.Host
}

// resolveProxy asks the Transport's proxy function where req goes. It
// returns the zero proxyKey for a direct connection.
func (t *Transport) resolveProxy(req *http.Request) (proxyKey, string, error) {
	if t.proxy == nil {
		return proxyKey{}, "", nil
	}
	u, err := t.proxy(req)
	if err != nil {
		return proxyKey{}, "", fmt.Errorf("choosing a proxy: %w", err)
	}
	if u == nil {
		return proxyKey{}, "", nil
	}
	k, err := proxyKeyOf(u)
	if err != nil {
		return proxyKey{}, "", err
	}
	// The URL as given identifies the route before any parsing (it is a
	// map key only, never shown: it may hold a password).
	return k, u.String(), nil
}

// ProxyConnectError is the answer of a proxy that refused to open a
// tunnel (CONNECT) to an https origin: a 407 when it wants credentials, a
// 403 when its rules forbid the origin. It names the proxy without its
// credentials.
type ProxyConnectError struct {
	Proxy      string // scheme://host:port of the proxy
	Target     string // host:port the tunnel was asked for
	StatusCode int    // the code of Status, for a program to test
	Status     string // the proxy's status line, "407 Proxy Authentication Required"
}

// Error names the proxy (without its credentials), the tunnel's target and
// the proxy's status line.
func (e *ProxyConnectError) Error() string {
	return fmt.Sprintf("proxy %s refused CONNECT to %s: %s", e.Proxy, e.Target, e.Status)
}

// errProxyConnect wraps a failure to set up the tunnel other than a
// refusal (the proxy unreachable, a broken answer).
func errProxyConnect(p proxyKey, target string, err error) error {
	return fmt.Errorf("proxy %s: CONNECT to %s: %w", p, target, err)
}
