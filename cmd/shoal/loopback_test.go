package main

import (
	"io"
	"net"
	"sync"
	"testing"
)

// serveLoopback listens on a loopback port and runs handle on each
// connection it accepts, on a goroutine of its own, then closes the
// connection. The test's cleanup closes the listener and waits for the
// accept loop and every handler, so none outlives the test. It returns
// the listener's address.
func serveLoopback(t *testing.T, handle func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// passThrough copies c to a new connection to upstream and back, until
// either side closes.
func passThrough(c net.Conn, upstream string) {
	up, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer up.Close()
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	_, _ = io.Copy(c, up)
}
