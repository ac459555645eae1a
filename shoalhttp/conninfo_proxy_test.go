package shoalhttp

import (
	"net/http"
	"strings"
	"testing"
)

// TestConnInfoThroughAProxy guards what ConnInfo says of a proxied
// connection: its RemoteAddr is the proxy's, and its TLS is the
// connection's own, the origin's through a tunnel and the proxy's for a
// plain-http origin behind an https proxy.
func TestConnInfoThroughAProxy(t *testing.T) {
	for _, tc := range []struct {
		name               string
		httpsOrigin, https bool // the origin's scheme, the proxy's
	}{
		{"http-origin-https-proxy", false, true},
		{"https-origin-http-proxy", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			origin, _, tlsCfg := newTLSServer(t, http.HandlerFunc(originEcho), false)
			url := origin.URL
			if !tc.httpsOrigin {
				plain, _ := newH1Server(t, http.HandlerFunc(originEcho))
				url = plain.URL
			}
			px := startTestProxy(t, "", "", tc.https)
			infos := make(chan ConnInfo, 4)
			tr := newTestTransport(t, Options{
				Proxy:           fixedProxy(px.proxyURL("", "")),
				TLSClientConfig: tlsCfg, // httptest's one certificate: the proxy's too
				MinConns:        -1,
				OnConnect:       func(c ConnInfo) { infos <- c },
			})
			if code, _ := get(t, tr, url+"/x"); code != http.StatusOK {
				t.Fatalf("status %d", code)
			}
			info := <-infos
			if got, want := info.RemoteAddr.String(), px.url.Host; got != want {
				t.Errorf("RemoteAddr %s, want the proxy's %s", got, want)
			}
			if info.TLS == nil {
				t.Fatal("TLS nil, want the connection's TLS state")
			}
			if want := "https://"; tc.httpsOrigin && !strings.HasPrefix(info.Origin, want) {
				t.Errorf("Origin %q, want %s...", info.Origin, want)
			}
		})
	}
}
