// Package loopback gives tests both ends of a real TCP connection on
// 127.0.0.1, closed when the test ends.
package loopback

import (
	"net"
	"testing"
)

// Pair returns the client and server ends of a loopback TCP connection.
func Pair(t testing.TB) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		client.Close()
		t.Fatal("loopback: accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}
