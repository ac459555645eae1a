package shoalhttp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/syncbuf"
)

// originEcho answers with the protocol and request URI it saw, and fails
// a request that carries proxy credentials: they are the proxy's, never
// the origin's.
func originEcho(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Proxy-Authorization") != "" {
		http.Error(w, "proxy credentials reached the origin", http.StatusTeapot)
		return
	}
	fmt.Fprintf(w, "%s %s", r.Proto, r.RequestURI)
}

// fixedProxy is a Proxy func that sends every request through u.
func fixedProxy(u *url.URL) func(*http.Request) (*url.URL, error) {
	return func(*http.Request) (*url.URL, error) { return u, nil }
}

func basicAuth(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// Plain http through a forward proxy: the request line is in absolute
// form, the proxy's credentials come from the proxy URL's userinfo, and
// the connection to the proxy is reused.
func TestProxyForwardsPlainHTTP(t *testing.T) {
	origin, originConns := newH1Server(t, http.HandlerFunc(originEcho))
	px := newTestProxy(t, "alice", "s3cret-pw")
	var logs syncbuf.Buffer
	tr := newTestTransport(t, Options{Proxy: fixedProxy(px.proxyURL("alice", "s3cret-pw")), Logger: newTestLogger(&logs)})

	for i := range 3 {
		code, body := get(t, tr, origin.URL+fmt.Sprintf("/p?i=%d", i))
		want := fmt.Sprintf("HTTP/1.1 /p?i=%d", i)
		if code != http.StatusOK || body != want {
			t.Fatalf("request %d: %d %q, want 200 %q", i, code, body, want)
		}
	}
	connects, uris, auths := px.seen()
	if len(connects) != 0 || len(uris) != 3 {
		t.Fatalf("proxy saw CONNECTs %v and requests %v, want 3 forwarded requests", connects, uris)
	}
	for i, u := range uris {
		if want := fmt.Sprintf("%s/p?i=%d", origin.URL, i); u != want {
			t.Errorf("request %d reached the proxy as %q, want the absolute form %q", i, u, want)
		}
	}
	for i, a := range auths {
		if a != basicAuth("alice", "s3cret-pw") {
			t.Errorf("request %d: Proxy-Authorization %q, want the proxy URL's credentials", i, a)
		}
	}
	if n := px.conns.n.Load(); n != 1 {
		t.Errorf("client opened %d connections to the proxy, want 1 (reused)", n)
	}
	if n := originConns.n.Load(); n != 1 {
		t.Errorf("proxy opened %d connections to the origin, want 1", n)
	}
	name, _ := onlyStats(t, tr)
	if want := strings.TrimPrefix(origin.URL, "http://"); !strings.Contains(name, want) || !strings.Contains(name, " via "+px.url.String()) {
		t.Errorf("Stats key %q, want the origin and \"via %s\"", name, px.url)
	}
	if strings.Contains(logs.String(), "s3cret-pw") || strings.Contains(logs.String(), basicAuth("alice", "s3cret-pw")) {
		t.Errorf("the proxy's password was logged:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "via "+px.url.String()) {
		t.Errorf("log does not name the proxied origin:\n%s", logs.String())
	}
}

// https through a CONNECT tunnel, HTTP/1.1 and HTTP/2 (by ALPN through the
// tunnel), to an http proxy and to an https one (TLS to the proxy, and the
// origin's TLS inside it): TLS is end to end with the origin, and the
// tunnel's connection is pooled.
func TestProxyTunnelsHTTPS(t *testing.T) {
	for _, tc := range []struct {
		name          string
		h2, httpsProx bool
	}{{"h1", false, false}, {"h2", true, false}, {"h1-https-proxy", false, true}, {"h2-https-proxy", true, true}} {
		h2 := tc.h2
		t.Run(tc.name, func(t *testing.T) {
			origin, originConns, tlsCfg := newTLSServer(t, http.HandlerFunc(originEcho), h2)
			// httptest's servers share one certificate: tlsCfg trusts the
			// proxy too.
			px := startTestProxy(t, "bob", "tunnel-pw", tc.httpsProx)
			tr := newTestTransport(t, Options{
				Proxy:           fixedProxy(px.proxyURL("bob", "tunnel-pw")),
				TLSClientConfig: tlsCfg,
				MinConns:        -1, // one connection, so one CONNECT
			})
			wantProto := map[bool]string{false: "HTTP/1.1", true: "HTTP/2.0"}[h2]
			for i := range 3 {
				code, body := get(t, tr, origin.URL+fmt.Sprintf("/t?i=%d", i))
				if want := fmt.Sprintf("%s /t?i=%d", wantProto, i); code != http.StatusOK || body != want {
					t.Fatalf("request %d: %d %q, want 200 %q", i, code, body, want)
				}
			}
			connects, uris, auths := px.seen()
			target := strings.TrimPrefix(origin.URL, "https://")
			if len(connects) != 1 || connects[0] != target || len(uris) != 0 {
				t.Fatalf("proxy saw CONNECTs %v and requests %v, want one CONNECT to %s", connects, uris, target)
			}
			if auths[0] != basicAuth("bob", "tunnel-pw") {
				t.Errorf("CONNECT's Proxy-Authorization %q, want the proxy URL's credentials", auths[0])
			}
			if n := originConns.n.Load(); n != 1 {
				t.Errorf("origin accepted %d connections, want 1 (through the tunnel, reused)", n)
			}
		})
	}
}

// A proxy that wants credentials: a tunnel it refuses fails with a
// ProxyConnectError naming the proxy and its status and never the
// password; a forwarded plain-http request gets the proxy's 407 as its
// response, as with net/http.
func TestProxyAuthRequired(t *testing.T) {
	origin, _, tlsCfg := newTLSServer(t, http.HandlerFunc(originEcho), true)
	plain, _ := newH1Server(t, http.HandlerFunc(originEcho))
	px := newTestProxy(t, "carol", "right-pw")
	var logs syncbuf.Buffer
	tr := newTestTransport(t, Options{
		Proxy:           fixedProxy(px.proxyURL("carol", "wrong-pw")),
		TLSClientConfig: tlsCfg,
		Logger:          newTestLogger(&logs),
	})
	// The Transport's error, not http.Client's (which quotes the URL).
	req, _ := http.NewRequest(http.MethodGet, origin.URL+"/secret-path?token=abc", nil)
	_, err := tr.RoundTrip(req)
	var pe *ProxyConnectError
	if !errors.As(err, &pe) {
		t.Fatalf("GET through a proxy that refuses the credentials: %v, want a *ProxyConnectError", err)
	}
	if pe.StatusCode != http.StatusProxyAuthRequired || pe.Proxy != px.url.String() || pe.Target != strings.TrimPrefix(origin.URL, "https://") {
		t.Errorf("ProxyConnectError %+v, want 407 from %s for %s", *pe, px.url, origin.URL)
	}
	msg := err.Error()
	for _, want := range []string{px.url.String(), "407 Proxy Authentication Required", "CONNECT"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	for _, secret := range []string{"wrong-pw", "carol", "secret-path", "token"} {
		if strings.Contains(msg, secret) {
			t.Errorf("error %q holds %q", msg, secret)
		}
	}

	resp, err := (&http.Client{Transport: tr}).Get(plain.URL + "/x")
	if err != nil {
		t.Fatalf("plain GET through the proxy: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusProxyAuthRequired {
		t.Errorf("plain GET with wrong proxy credentials: %d, want the proxy's 407", resp.StatusCode)
	}
	if strings.Contains(logs.String(), "wrong-pw") || strings.Contains(logs.String(), basicAuth("carol", "wrong-pw")) {
		t.Errorf("the proxy's password was logged:\n%s", logs.String())
	}
}

// A proxy that forbids the tunnel (403): the error names the proxy and
// the status, and the origin was never reached.
func TestProxyRefusedConnect(t *testing.T) {
	origin, originConns, tlsCfg := newTLSServer(t, http.HandlerFunc(originEcho), false)
	px := newTestProxy(t, "", "")
	px.refuse = true
	tr := newTestTransport(t, Options{Proxy: fixedProxy(px.proxyURL("", "")), TLSClientConfig: tlsCfg})
	_, err := (&http.Client{Transport: tr}).Get(origin.URL + "/")
	var pe *ProxyConnectError
	if !errors.As(err, &pe) || pe.StatusCode != http.StatusForbidden {
		t.Fatalf("GET through a proxy refusing CONNECT: %v, want a *ProxyConnectError with 403", err)
	}
	if want := "proxy " + px.url.String() + " refused CONNECT to " + pe.Target + ": 403 Forbidden"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if n := originConns.n.Load(); n != 0 {
		t.Errorf("origin accepted %d connections, want none", n)
	}
}

// A Proxy func that returns nil for a request sends it direct; the same
// origin through two proxies, and two origins through one proxy, get
// separate connections.
func TestProxyRoutesAreNotMixed(t *testing.T) {
	a, aConns := newH1Server(t, http.HandlerFunc(originEcho))
	b, _ := newH1Server(t, http.HandlerFunc(originEcho))
	pxA := newTestProxy(t, "", "")
	pxB := newTestProxy(t, "", "")
	route := func(req *http.Request) (*url.URL, error) {
		switch req.Header.Get("X-Route") {
		case "a":
			return pxA.proxyURL("", ""), nil
		case "b":
			return pxB.proxyURL("", ""), nil
		}
		return nil, nil
	}
	tr := newTestTransport(t, Options{Proxy: route})
	c := &http.Client{Transport: tr}
	// send returns the proxy that forwarded the answer, "" for none.
	send := func(target, via string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, target+"/r", nil)
		req.Header.Set("X-Route", via)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("GET %s via %q: %v", target, via, err)
		}
		defer resp.Body.Close()
		if body, _ := io.ReadAll(resp.Body); string(body) != "HTTP/1.1 /r" {
			t.Fatalf("GET %s via %q: origin saw %q", target, via, body)
		}
		return resp.Header.Get(viaHeader)
	}
	for range 2 {
		if got := send(a.URL, ""); got != "" {
			t.Errorf("a request the Proxy func sends direct went through %s", got)
		}
		if got := send(a.URL, "a"); got != pxA.url.Host {
			t.Errorf("via proxy A: answered through %q, want %s", got, pxA.url.Host)
		}
		if got := send(a.URL, "b"); got != pxB.url.Host {
			t.Errorf("via proxy B: answered through %q, want %s", got, pxB.url.Host)
		}
		if got := send(b.URL, "a"); got != pxA.url.Host {
			t.Errorf("origin B via proxy A: answered through %q, want %s", got, pxA.url.Host)
		}
	}
	_, urisA, _ := pxA.seen()
	_, urisB, _ := pxB.seen()
	wantA := []string{a.URL + "/r", b.URL + "/r", a.URL + "/r", b.URL + "/r"}
	if fmt.Sprint(urisA) != fmt.Sprint(wantA) || fmt.Sprint(urisB) != fmt.Sprint([]string{a.URL + "/r", a.URL + "/r"}) {
		t.Errorf("proxy A saw %v, proxy B saw %v", urisA, urisB)
	}
	// Proxy A carried two origins, sequentially: one connection each,
	// never one connection for both.
	if n := pxA.conns.n.Load(); n != 2 {
		t.Errorf("proxy A accepted %d connections, want 2 (one per origin)", n)
	}
	// Origin A: one direct connection, one from each proxy.
	if n := aConns.n.Load(); n != 3 {
		t.Errorf("origin A accepted %d connections, want 3", n)
	}
	if n := len(tr.Stats()); n != 4 {
		t.Errorf("Stats has %d pools, want 4: %v", n, tr.Stats())
	}
}

// The default Proxy reads HTTP_PROXY, HTTPS_PROXY and NO_PROXY as
// http.ProxyFromEnvironment does (no traffic: the resolution alone);
// NoProxy turns it off; a setting that does not parse fails the request
// without quoting it.
func TestProxyFromEnvironmentByDefault(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://envuser:envpw@proxy.example:3128")
	t.Setenv("HTTPS_PROXY", "https://tunnel.example")
	t.Setenv("NO_PROXY", "direct.example")
	for _, name := range []string{"http_proxy", "https_proxy", "no_proxy", "REQUEST_METHOD"} {
		t.Setenv(name, "")
	}
	tr := newTestTransport(t, Options{})
	off := newTestTransport(t, Options{Proxy: NoProxy})
	for _, tc := range []struct {
		url, want, auth string
	}{
		{"http://api.example/x", "http://proxy.example:3128", basicAuth("envuser", "envpw")},
		{"https://api.example/x", "https://tunnel.example:443", ""},
		{"http://direct.example/x", "", ""},
		{"http://localhost:8080/x", "", ""},
		{"http://127.0.0.1/x", "", ""},
	} {
		req, _ := http.NewRequest(http.MethodGet, tc.url, nil)
		k, _, err := tr.resolveProxy(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		got := ""
		if k.isSet() {
			got = k.String()
		}
		if got != tc.want || k.auth != tc.auth {
			t.Errorf("%s: proxy %q (auth %q), want %q (auth %q)", tc.url, got, k.auth, tc.want, tc.auth)
		}
		if k, _, _ := off.resolveProxy(req); k.isSet() {
			t.Errorf("%s with NoProxy: proxy %s, want none", tc.url, k)
		}
	}

	// In a CGI program HTTP_PROXY may come from the client: refused.
	t.Setenv("REQUEST_METHOD", "GET")
	cgi := newTestTransport(t, Options{})
	req, _ := http.NewRequest(http.MethodGet, "http://api.example/", nil)
	_, err := cgi.RoundTrip(req)
	if err == nil || !strings.Contains(err.Error(), "CGI") || strings.Contains(err.Error(), "envpw") {
		t.Errorf("request with HTTP_PROXY in a CGI program: %v, want the CGI refusal, without the setting", err)
	}
	t.Setenv("REQUEST_METHOD", "")

	for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY"} {
		t.Setenv(name, "")
	}
	if none := newTestTransport(t, Options{}); none.proxy != nil {
		t.Error("no proxy in the environment: the Transport still calls a proxy func per request")
	}
}

// A proxy URL with an unsupported scheme fails the request with an error
// that names the scheme and not the credentials.
func TestProxyUnsupportedScheme(t *testing.T) {
	u, _ := url.Parse("socks5://user:sockspw@127.0.0.1:1080")
	tr := newTestTransport(t, Options{Proxy: fixedProxy(u)})
	_, err := (&http.Client{Transport: tr}).Get("http://127.0.0.1:1/")
	if err == nil || !strings.Contains(err.Error(), `unsupported proxy scheme "socks5"`) || strings.Contains(err.Error(), "sockspw") {
		t.Errorf("GET via a socks5 proxy: %v, want an error naming the scheme, not the password", err)
	}
}

// Warm and SetMaxConns name an origin; with a proxy they act on the pool
// its requests use, through the proxy the Proxy func picks for it.
func TestProxyWarmAndSetMaxConns(t *testing.T) {
	origin, originConns, tlsCfg := newTLSServer(t, http.HandlerFunc(originEcho), false)
	px := newTestProxy(t, "", "")
	tr := newTestTransport(t, Options{Proxy: fixedProxy(px.proxyURL("", "")), TLSClientConfig: tlsCfg, MinIdle: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Warm(ctx, origin.URL); err != nil {
		t.Fatalf("Warm: %v", err)
	}
	if err := tr.SetMaxConns(origin.URL, 3); err != nil {
		t.Fatalf("SetMaxConns: %v", err)
	}
	name, st := onlyStats(t, tr)
	if !strings.Contains(name, " via "+px.url.String()) || st.TotalConns < 2 || st.MaxConns != 3 {
		t.Errorf("after Warm and SetMaxConns: %s %+v, want the proxied pool with 2 connections and MaxConns 3", name, st)
	}
	if connects, _, _ := px.seen(); len(connects) < 2 {
		t.Errorf("proxy saw CONNECTs %v, want the warmed connections' tunnels", connects)
	}
	// The first request uses the warmed pool: no new tunnel.
	before := originConns.n.Load()
	get(t, tr, origin.URL+"/")
	if n := originConns.n.Load(); n != before {
		t.Errorf("the request after Warm opened %d new connections", n-before)
	}
}

// The environment's proxy settings are read when NewTransport runs, as
// net/http reads them once: a change after it does not move requests.
func TestProxyEnvironmentIsReadAtNewTransport(t *testing.T) {
	for _, n := range []string{"http_proxy", "https_proxy", "no_proxy", "NO_PROXY", "HTTPS_PROXY", "REQUEST_METHOD"} {
		t.Setenv(n, "")
	}
	t.Setenv("HTTP_PROXY", "http://one.example:3128")
	tr := newTestTransport(t, Options{})
	t.Setenv("HTTP_PROXY", "http://two.example:3128")
	req, _ := http.NewRequest(http.MethodGet, "http://api.example/", nil)
	k, _, err := tr.resolveProxy(req)
	if err != nil || k.String() != "http://one.example:3128" {
		t.Fatalf("proxy %v (%v), want the one set at NewTransport", k, err)
	}
}
