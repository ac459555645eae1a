package shoalhttp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shoalpool/shoal"
)

// A server whose certificate the client does not trust fails the request at
// once with the certificate error marked permanent, and the next request
// fails with it too without a new dial: a retry cannot mend it, so the pool
// waits seconds before it dials the server again.
func TestUntrustedCertificateIsPermanent(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes it refuses are the point
	srv.StartTLS()
	defer srv.Close()
	var dials atomic.Int32
	tr, err := NewTransport(Options{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close(context.Background())
	client := &http.Client{Transport: tr}
	for i := range 2 {
		resp, err := client.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("request %d to a server with an untrusted certificate succeeded", i)
		}
		var unknown x509.UnknownAuthorityError
		if !errors.Is(err, shoal.ErrPermanent) || !errors.As(err, &unknown) {
			t.Fatalf("request %d: %v, want the certificate error, marked permanent", i, err)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Fatalf("%d dials for two requests, want 1: the second fails on the first's error", n)
	}
}

// A proxy's 401, 403 and 407 are permanent: retrying cannot help.
func TestProxyRefusalsArePermanent(t *testing.T) {
	for _, code := range []int{401, 403, 407} {
		if !permanent(&ProxyConnectError{StatusCode: code}) {
			t.Errorf("proxy %d: not permanent", code)
		}
	}
}

// A TLS 1.3 server that wants a client certificate it was not given
// refuses it only after the client's handshake is over: over HTTP/2 its
// alert arrives with the connection's first frames, as the pool reads the
// server's settings, and fails the dial as permanent, as the same refusal
// does during a TLS 1.2 handshake. The client's first writes may meet the
// connection the server closed after the alert, before the alert is read:
// each of many fresh Transports' dials must report the alert all the same.
func TestTLS13ClientCertRefusalIsPermanentOverHTTP2(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes it refuses are the point
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert, MinVersion: tls.VersionTLS13}
	srv.StartTLS()
	defer srv.Close()
	const dials = 50
	lost := 0
	var last error
	for range dials {
		tr := newTestTransport(t, Options{TLSClientConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()})
		resp, err := tr.RoundTrip(mustRequest(t, srv.URL))
		if err == nil {
			resp.Body.Close()
			t.Fatal("a request without the client certificate the server wants succeeded")
		}
		if !strings.Contains(err.Error(), "certificate required") {
			lost++
			last = err
			continue
		}
		if !errors.Is(err, shoal.ErrPermanent) {
			t.Fatalf("%v: the server's certificate_required alert, not marked permanent", err)
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d dials lost the server's alert; the last: %v", lost, dials, last)
	}
}
