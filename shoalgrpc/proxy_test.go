package shoalgrpc

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// proxyChildTarget is the environment variable that makes
// TestHTTPSProxyKeepsGRPCsDialer's child process call its target.
const proxyChildTarget = "SHOALGRPC_TEST_PROXY_TARGET"

// TestHTTPSProxyKeepsGRPCsDialer guards grpc.md's promise that a set
// HTTPS_PROXY keeps grpc-go's own dialer, so that calls go through the
// proxy: grpc-go uses none once a context dialer is installed. net/http
// reads the proxy variables once per process, so the calls run in a child
// process of this test binary with HTTPS_PROXY set, to a name that is not
// loopback to the proxy rules, through a CONNECT proxy on loopback that
// tunnels to the test server.
func TestHTTPSProxyKeepsGRPCsDialer(t *testing.T) {
	if target := os.Getenv(proxyChildTarget); target != "" {
		p := newTestPool(t, target, Options{})
		if _, err := testpb.NewTestServiceClient(p).UnaryCall(testContext(t, 20*time.Second), &testpb.SimpleRequest{}); err != nil {
			t.Fatalf("a call with HTTPS_PROXY set: %v", err)
		}
		return
	}
	name := loopbackHostName(t)
	srv := startTestServer(t, 10)
	px := startConnectProxy(t, srv.addr)
	_, port, _ := net.SplitHostPort(srv.addr)
	target := net.JoinHostPort(name, port)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHTTPSProxyKeepsGRPCsDialer$", "-test.count=1")
	cmd.Env = append(os.Environ(), proxyChildTarget+"=dns:///"+target,
		"HTTPS_PROXY=http://"+px.addr, "https_proxy=", "NO_PROXY=", "no_proxy=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the child's call through the proxy: %v\n%s", err, out)
	}
	if got := px.connects(); len(got) == 0 || got[0] != target {
		t.Fatalf("the proxy saw CONNECTs to %q, want one to %s: the pool dialled around HTTPS_PROXY", got, target)
	}
}

// loopbackHostName returns a name other than localhost that /etc/hosts maps
// to a loopback address (the machine's own name, on most systems), read
// from the file so that no DNS query leaves the machine.
func loopbackHostName(t *testing.T) string {
	t.Helper()
	hosts, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Skipf("no /etc/hosts: %v", err)
	}
	for line := range strings.Lines(string(hosts)) {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if ip := net.ParseIP(f[0]); ip == nil || !ip.IsLoopback() || ip.To4() == nil {
			continue
		}
		for _, name := range f[1:] {
			if !strings.EqualFold(name, "localhost") && !strings.HasPrefix(strings.ToLower(name), "localhost.") {
				return name
			}
		}
	}
	t.Skip("/etc/hosts maps no name but localhost to a loopback address")
	return ""
}

// connectProxy is an HTTP CONNECT proxy on loopback that tunnels every
// CONNECT to one address, whatever it names, and records what each named.
type connectProxy struct {
	addr string
	mu   sync.Mutex
	seen []string
}

// connects returns the CONNECT targets the proxy saw.
func (p *connectProxy) connects() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// startConnectProxy starts a connectProxy tunnelling to to, stopped when
// the test ends.
func startConnectProxy(t *testing.T, to string) *connectProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &connectProxy{addr: l.Addr().String()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	track := func(c net.Conn) {
		mu.Lock()
		open = append(open, c)
		mu.Unlock()
	}
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			track(c)
			wg.Go(func() { p.serve(c, to, track) })
		}
	})
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return p
}

// serve answers one CONNECT on c and tunnels it to to.
func (p *connectProxy) serve(c net.Conn, to string, track func(net.Conn)) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		return
	}
	p.mu.Lock()
	p.seen = append(p.seen, req.Host)
	p.mu.Unlock()
	up, err := net.Dial("tcp", to)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	track(up)
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		io.Copy(up, br)
		up.Close()
		close(done)
	}()
	io.Copy(c, up)
	c.Close()
	<-done
}
