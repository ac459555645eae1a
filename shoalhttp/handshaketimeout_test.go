package shoalhttp

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTLSHandshakeTimeoutBoundsTheHandshake: a server that accepts the
// connection and never answers the TLS handshake fails the request once
// TLSHandshakeTimeout has passed, with an error naming it, well before the
// caller's own deadline (docs/settings.md: "TLSHandshakeTimeout (10s;
// negative: none)").
func TestTLSHandshakeTimeoutBoundsTheHandshake(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var held []net.Conn // accepted and left silent; closed with the listener's goroutine
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })

	const timeout = 300 * time.Millisecond
	tr := newTestTransport(t, Options{TLSHandshakeTimeout: timeout})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+ln.Addr().String()+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	took := time.Since(start)
	if err == nil {
		resp.Body.Close()
		t.Fatal("a request to a server that never answers the TLS handshake succeeded")
	}
	if !strings.Contains(err.Error(), "no answer within TLSHandshakeTimeout (300ms)") {
		t.Errorf("error %q, want one naming TLSHandshakeTimeout (300ms)", err)
	}
	if took > 10*time.Second {
		t.Errorf("the request failed after %v, want soon after TLSHandshakeTimeout (%v)", took.Round(time.Millisecond), timeout)
	}
}
