package shoalhttp_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalhttp"
)

// slowDialOrigin starts an https server that answers every request with
// an empty 200, over HTTP/2 when h2, and returns its URL and a maker of
// Transports to it whose every TCP connect takes connect, on the clock of
// the synctest bubble the maker is called in, and whose origins report to
// obs: the tests of the probe's first connection time what it waited for.
func slowDialOrigin(t *testing.T, h2 bool) (url string, transport func(t *testing.T, connect time.Duration, obs shoal.Observer) *shoalhttp.Transport) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.EnableHTTP2 = h2
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tlsConfig := srv.Client().Transport.(*http.Transport).TLSClientConfig
	return srv.URL, func(t *testing.T, connect time.Duration, obs shoal.Observer) *shoalhttp.Transport {
		var d net.Dialer
		tr, err := shoalhttp.NewTransport(shoalhttp.Options{
			Proxy:           shoalhttp.NoProxy,
			TLSClientConfig: tlsConfig,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				time.Sleep(connect)
				return d.DialContext(ctx, network, addr)
			},
			Observer: func(string) shoal.Observer { return obs },
		})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
}
