package shoalhttp

import (
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// testProxy is a small forward and CONNECT proxy on loopback, a real
// net/http server: absolute-form requests are forwarded to their origin,
// CONNECT opens a tunnel (hijacked connection spliced to the origin). It
// records what it was asked, so tests can check how requests reached it.
type testProxy struct {
	srv   *httptest.Server
	url   *url.URL // http://127.0.0.1:port, without credentials
	conns connCounter

	user, pass string // credentials it requires; "" for none
	refuse     bool   // answer every CONNECT with 403 Forbidden

	fwd *http.Transport // to the origins, direct

	mu       sync.Mutex
	connects []string // CONNECT targets, host:port
	uris     []string // request URIs of forwarded requests
	auths    []string // Proxy-Authorization of every request, "" when absent
	tunnels  sync.WaitGroup
	open     []net.Conn // hijacked and origin connections, closed at the end
}

// newTestProxy starts a proxy requiring user:pass when user is set.
func newTestProxy(t *testing.T, user, pass string) *testProxy {
	t.Helper()
	return startTestProxy(t, user, pass, false)
}

// startTestProxy starts a proxy, spoken to over TLS (an https proxy, with
// httptest's certificate) when overTLS is set.
func startTestProxy(t *testing.T, user, pass string, overTLS bool) *testProxy {
	t.Helper()
	p := &testProxy{user: user, pass: pass, fwd: &http.Transport{Proxy: nil}}
	p.srv = httptest.NewUnstartedServer(p)
	p.srv.Config.ConnState = p.conns.hook
	if overTLS {
		p.srv.StartTLS()
	} else {
		p.srv.Start()
	}
	p.url, _ = url.Parse(p.srv.URL)
	t.Cleanup(p.close)
	return p
}

// proxyURL returns the proxy's URL with the given userinfo (none when user
// is "").
func (p *testProxy) proxyURL(user, pass string) *url.URL {
	u := *p.url
	if user != "" {
		u.User = url.UserPassword(user, pass)
	}
	return &u
}

func (p *testProxy) close() {
	p.srv.Close()
	p.mu.Lock()
	for _, c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.tunnels.Wait()
	p.fwd.CloseIdleConnections()
}

func (p *testProxy) record(r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.auths = append(p.auths, r.Header.Get("Proxy-Authorization"))
	if r.Method == http.MethodConnect {
		p.connects = append(p.connects, r.Host)
	} else {
		p.uris = append(p.uris, r.RequestURI)
	}
}

// seen returns copies of what the proxy recorded.
func (p *testProxy) seen() (connects, uris, auths []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.connects...), append([]string(nil), p.uris...), append([]string(nil), p.auths...)
}

func (p *testProxy) authorized(r *http.Request) bool {
	if p.user == "" {
		return true
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(p.user+":"+p.pass))
	return r.Header.Get("Proxy-Authorization") == want
}

func (p *testProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.record(r)
	if !p.authorized(r) {
		w.Header().Set("Proxy-Authenticate", `Basic realm="test"`)
		http.Error(w, "proxy credentials required", http.StatusProxyAuthRequired)
		return
	}
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() {
		http.Error(w, "not a proxy request: "+r.RequestURI, http.StatusBadRequest)
		return
	}
	if !loopbackHost(r.URL.Hostname()) {
		http.Error(w, "test proxy forwards to loopback only", http.StatusForbidden)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Authorization")
	resp, err := p.fwd.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.Header().Set(viaHeader, p.url.Host)
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// tunnel answers a CONNECT: it dials the target, says 200 and splices the
// two connections until either side closes.
func (p *testProxy) tunnel(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil || !loopbackHost(host) {
		http.Error(w, "test proxy tunnels to loopback only", http.StatusForbidden)
		return
	}
	if p.refuse {
		http.Error(w, "tunnels forbidden here", http.StatusForbidden)
		return
	}
	up, err := net.DialTimeout("tcp", r.Host, 5*time.Second)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	down, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		up.Close()
		return
	}
	p.mu.Lock()
	p.open = append(p.open, up, down)
	p.tunnels.Add(2)
	p.mu.Unlock()
	rw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n")
	rw.Flush()
	go func() {
		defer p.tunnels.Done()
		io.Copy(up, rw) // what the client sent, buffered bytes first
		up.(*net.TCPConn).CloseWrite()
	}()
	go func() {
		defer p.tunnels.Done()
		io.Copy(down, up)
		down.Close()
	}()
}

// viaHeader is set by the proxy on the responses it forwards, to the
// proxy's host:port.
const viaHeader = "X-Test-Proxy"

func loopbackHost(host string) bool {
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
