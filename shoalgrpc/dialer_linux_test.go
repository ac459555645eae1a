//go:build linux

package shoalgrpc

import (
	"context"
	"net"
	"syscall"
	"testing"
)

// The pool's dialer keeps Go's default TCP keep-alive, 15 seconds idle
// before the first probe.
func TestDialerKeepsTCPKeepAliveAt15s(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := netDial(context.Background(), nil, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, _ := c.(*net.TCPConn).SyscallConn()
	var on, idle int
	raw.Control(func(fd uintptr) {
		on, _ = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)
		idle, _ = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE)
	})
	if on != 1 || idle != 15 {
		t.Fatalf("SO_KEEPALIVE %d, TCP_KEEPIDLE %d; want 1 and 15", on, idle)
	}
}
