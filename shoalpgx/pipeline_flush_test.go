package shoalpgx

import (
	"io"
	"net"
	"testing"
)

// A write to a socket already closed reports no bytes written, not the
// count of the write before it: flushLocked keeps b[n:] for the background
// writer, and a count from an earlier, longer write would slice past b.
func TestRawWriterReportsNothingOnAClosedSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			_, _ = io.Copy(io.Discard, c)
			_ = c.Close()
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := nc.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	w := newRawWriter(raw)
	if n, err := w.write(make([]byte, 1000)); err != nil || n != 1000 {
		t.Fatalf("the first write: %d, %v; want 1000, nil", n, err)
	}
	_ = nc.Close()
	b := make([]byte, 10)
	if n, err := w.write(b); n != 0 || err == nil {
		t.Fatalf("a write after the socket closed: %d, %v; want 0 and an error", n, err)
	}
}
