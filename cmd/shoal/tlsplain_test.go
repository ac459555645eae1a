package main

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// hangUpListener is a loopback port that reads what a client sends and
// closes without a word, as a plain TCP service may: a TLS client waiting
// for the server's hello reads EOF.
func hangUpListener(t *testing.T) string {
	t.Helper()
	return serveLoopback(t, func(c net.Conn) {
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		_ = c.(*net.TCPConn).CloseWrite()
		_, _ = io.Copy(io.Discard, c)
	})
}

// TestTLSTargetOnAPlainPort: a TLS target whose port speaks plain HTTP, or
// plain TCP that hangs up, fails saying that the TLS handshake got no TLS
// answer and which scheme to try instead, naming the target masked; not a
// bare "EOF".
func TestTLSTargetOnAPlainPort(t *testing.T) {
	plainHTTP := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer plainHTTP.Close()
	for _, addr := range []string{plainHTTP.Listener.Addr().String(), hangUpListener(t)} {
		for _, c := range []struct{ prefix, masked, instead string }{
			{"https://u:hunter2pw@", "https://u:REDACTED@", "try http:// instead of https://"},
			{"grpcs://", "grpcs://", "try grpc:// instead of grpcs://"},
			{"clickhouse+https://u:hunter2pw@", "clickhouse+https://u:REDACTED@", "try clickhouse+http:// instead of clickhouse+https://"},
		} {
			target := c.prefix + addr
			r := runShoal(t, "bench", "--quick", "--dial-timeout", "5s", "--target", target)
			r.wantCode(t, exitFailed)
			for _, want := range []string{"TLS handshake", c.instead, "--target " + c.masked + addr} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("%s: stderr lacks %q:\n%s", target, want, r.stderr)
				}
			}
			if strings.HasSuffix(r.stderr, ": EOF\n") || strings.Contains(r.stdout+r.stderr, "hunter2pw") {
				t.Errorf("%s: a bare EOF, or the password:\n%s", target, r.stderr)
			}
		}
	}
}

// TestTLSTargetWithAnUntrustedCertificate: a port that does answer in TLS
// keeps the handshake's own error (here the test server's certificate,
// which no system root signed), with no advice to drop TLS.
func TestTLSTargetWithAnUntrustedCertificate(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake the client gives up
	srv.StartTLS()
	defer srv.Close()
	target := "https://" + srv.Listener.Addr().String()
	r := runShoal(t, "bench", "--quick", "--dial-timeout", "5s", "--target", target)
	r.wantCode(t, exitFailed)
	if !strings.Contains(r.stderr, "certificate") || strings.Contains(r.stderr, "try http://") {
		t.Errorf("%s: want the certificate's error alone:\n%s", target, r.stderr)
	}
}
