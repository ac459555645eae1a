package etcdtest

import (
	"fmt"
	"net"
)

// freePorts returns n distinct loopback ports that were free a moment ago.
// It holds all n listeners open at once so that the kernel cannot hand the
// same port out twice; another process can still take one before etcd binds
// it, which Start detects and retries.
func freePorts(n int) ([]int, error) {
	lns := make([]net.Listener, 0, n)
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("etcdtest: finding a free port: %w", err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
