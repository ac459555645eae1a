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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var serving sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
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
			serving.Go(func() { handle(c) })
		}
	})
	return ln.Addr().String()
}
