package pgpair

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// echoUpstream listens on loopback and sends back what each connection
// sends it, until the test ends.
func echoUpstream(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// echo writes b through c and reads it back, within five seconds.
func echo(t *testing.T, c net.Conn, b byte) error {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte{b}); err != nil {
		return err
	}
	got := make([]byte, 1)
	if _, err := io.ReadFull(c, got); err != nil {
		return err
	}
	if got[0] != b {
		t.Fatalf("echo through the proxy: %q, want %q", got[0], b)
	}
	return nil
}

// waitHeld returns once bytes wait at proxy's hold, and fails the test if
// none do within ten seconds.
func waitHeld(t *testing.T, proxy *Proxy) {
	t.Helper()
	select {
	case <-proxy.Held():
	case <-time.After(10 * time.Second):
		t.Fatal("no bytes waited at the proxy's hold within 10s")
	}
}

func dialProxy(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// HoldOpen holds the connections open at the time, and Held says when
// their bytes wait, while a later connection passes; Release lets the
// held bytes through. Hold then holds new connections too, and Cut closes
// the ones open.
func TestProxyHoldReleaseCut(t *testing.T) {
	proxy, err := NewProxy(echoUpstream(t))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	old := dialProxy(t, proxy)
	if err := echo(t, old, 'a'); err != nil {
		t.Fatal(err)
	}

	proxy.HoldOpen()
	done := make(chan error, 1)
	go func() { done <- echo(t, old, 'b') }()
	waitHeld(t, proxy)
	if err := echo(t, dialProxy(t, proxy), 'c'); err != nil {
		t.Fatalf("a connection opened after HoldOpen: %v, want it forwarded", err)
	}
	proxy.Release()
	if err := <-done; err != nil {
		t.Fatalf("the held connection after Release: %v", err)
	}

	proxy.Hold()
	later := dialProxy(t, proxy)
	go func() { done <- echo(t, later, 'd') }()
	waitHeld(t, proxy)
	proxy.Cut()
	if err := <-done; !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("a connection held since it opened, then cut: %v, want it closed", err)
	}
	proxy.Release()
	if err := echo(t, dialProxy(t, proxy), 'e'); err != nil {
		t.Fatalf("a connection after Cut and Release: %v", err)
	}
}
