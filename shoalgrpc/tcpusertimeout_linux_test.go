//go:build linux

package shoalgrpc

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/embedded"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
)

// tcpUserTimeout is TCP_USER_TIMEOUT from linux/tcp.h, which package
// syscall does not name.
const tcpUserTimeout = 0x12

// TestTCPUserTimeoutOverTLS guards what the package doc says of
// TCP_USER_TIMEOUT over TLS: the pool's context dialer is installed there
// too, so grpc-go leaves it unset, and IgnoreServerStreamLimit, which
// costs nothing over TLS, gives it back.
func TestTCPUserTimeoutOverTLS(t *testing.T) {
	cert, err := embedded.NewCert()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ignore bool
		want   int // milliseconds
	}{{false, 0}, {true, 7000}} {
		srv, err := embedded.StartGRPCServer(cert, 0)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewClient(srv.Addr(), Options{MaxConns: 1, IgnoreServerStreamLimit: c.ignore},
			grpc.WithTransportCredentials(credentials.NewTLS(cert.ClientTLS())),
			grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: time.Minute, Timeout: 7 * time.Second}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := healthpb.NewHealthClient(p).Check(testContext(t, 10*time.Second), &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatal(err)
		}
		got, ok := userTimeoutOfSocketTo(t, srv.Addr())
		if !ok {
			t.Errorf("IgnoreServerStreamLimit %v: no socket to %s found", c.ignore, srv.Addr())
		} else if got != c.want {
			t.Errorf("IgnoreServerStreamLimit %v: TCP_USER_TIMEOUT %dms, want %dms", c.ignore, got, c.want)
		}
		_ = p.Close()
		_ = srv.Close()
	}
}

// userTimeoutOfSocketTo finds this process's TCP socket connected to addr
// (the client's side, whichever dialer made it) and reads its
// TCP_USER_TIMEOUT.
func userTimeoutOfSocketTo(t *testing.T, addr string) (int, bool) {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		peer, err := syscall.Getpeername(fd)
		in4, ok := peer.(*syscall.SockaddrInet4)
		if err != nil || !ok || strconv.Itoa(in4.Port) != port {
			continue
		}
		ms, err := syscall.GetsockoptInt(fd, syscall.IPPROTO_TCP, tcpUserTimeout)
		if err != nil {
			t.Fatalf("getsockopt TCP_USER_TIMEOUT: %v", err)
		}
		return ms, true
	}
	return 0, false
}
