package shoalhttp

import (
	"io"
	"net/http"
	"testing"
)

// TestUnboundedDialReachesHTTPS guards the probe of an https origin with a
// dial step unbounded (a negative DialTimeout or TLSHandshakeTimeout): it
// must dial without a bound, not under a timeout of 0 that fails at once.
func TestUnboundedDialReachesHTTPS(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) })
	for _, c := range []struct {
		name string
		opts Options
	}{
		{"DialTimeout<0", Options{DialTimeout: -1}},
		{"TLSHandshakeTimeout<0", Options{TLSHandshakeTimeout: -1}},
		{"both<0", Options{DialTimeout: -1, TLSHandshakeTimeout: -1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, _, tlsCfg := newH2TLSServer(t, h, 0)
			c.opts.TLSClientConfig = tlsCfg
			tr := newTestTransport(t, c.opts)
			if _, body := get(t, tr, srv.URL); body != "HTTP/2.0" {
				t.Fatalf("got %q, want HTTP/2.0", body)
			}
		})
	}
}
