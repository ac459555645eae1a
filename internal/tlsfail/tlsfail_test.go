package tlsfail

import (
	"crypto/tls"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/selfsigned"
)

// handshake runs a TLS client handshake with client against a loopback
// server that serves with server (a plain TCP server that answers in
// HTTP when server is nil) and returns the client's error.
func handshake(t *testing.T, server, client *tls.Config) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if server == nil {
			_, _ = c.Write([]byte("HTTP/1.0 400 Bad Request\r\n\r\n"))
			return
		}
		_ = tls.Server(c, server).Handshake()
	}()
	defer func() { <-done }()
	d := &net.Dialer{Timeout: 10 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", ln.Addr().String(), client)
	if err == nil {
		c.Close()
	}
	return err
}

func TestClassify(t *testing.T) {
	cert, err := selfsigned.New()
	if err != nil {
		t.Fatal(err)
	}
	wantsClientCert := cert.ServerTLS()
	wantsClientCert.ClientAuth = tls.RequireAndVerifyClientCert
	// TLS 1.2: the server's refusal comes during the client's handshake
	// (with 1.3 it may come after the client considers it done).
	wantsClientCert.MaxVersion = tls.VersionTLS12
	for _, tc := range []struct {
		name           string
		server, client *tls.Config
		want           Cause
	}{
		{"untrusted certificate", cert.ServerTLS(), &tls.Config{ServerName: "127.0.0.1"}, CertificateRejected},
		{"wrong name", cert.ServerTLS(), &tls.Config{RootCAs: cert.Pool, ServerName: "db.example"}, CertificateRejected},
		{"client certificate wanted", wantsClientCert, cert.ClientTLS(), Refused},
		{"not TLS", nil, cert.ClientTLS(), NotTLS},
	} {
		err := handshake(t, tc.server, tc.client)
		got, shown := Classify(err)
		if got != tc.want || !got.Permanent() || shown == nil {
			t.Errorf("%s: Classify(%v) = %v (%v), want %v, permanent", tc.name, err, got, shown, tc.want)
		}
	}
	if c, _ := Classify(errors.New("connection refused")); c != None || c.Permanent() {
		t.Errorf("a refused connect classified %v", c)
	}
	if c, _ := Classify(tls.AlertError(80)); c != Alert || c.Permanent() {
		t.Errorf("internal_error classified %v, want a transient Alert", c)
	}
}
