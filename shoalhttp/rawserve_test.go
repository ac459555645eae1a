package shoalhttp

import (
	"net"
	"sync"
	"testing"
)

// serveTCP listens on a loopback port and runs handle on a goroutine of
// its own for each connection, for a server the test writes frame by
// frame. The test's cleanup closes the listener and every connection and
// waits for every handle to return. It returns the listener's address.
func serveTCP(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	return serveTCPDone(t, func(c net.Conn, _ <-chan struct{}, _ *sync.WaitGroup) { handle(c) })
}

// serveTCPDone is serveTCP for a handler that starts goroutines of its
// own beside its reads: it runs them on serving, which the cleanup waits
// for, and ends them when done closes, as the cleanup begins.
func serveTCPDone(t *testing.T, handle func(c net.Conn, done <-chan struct{}, serving *sync.WaitGroup)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var serving sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		close(done)
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		serving.Wait()
	})
	serving.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			serving.Go(func() { handle(c, done, &serving) })
		}
	})
	return ln.Addr().String()
}
