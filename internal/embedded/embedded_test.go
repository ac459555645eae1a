package embedded

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func startAll(t *testing.T) *Servers {
	t.Helper()
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestLineServer(t *testing.T) {
	s := startAll(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := DialLine(ctx, s.Line.Addr(), s.Cert.ClientTLS(), 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 3 {
		if err := c.Do(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if c.Err() != nil {
		t.Fatal(c.Err())
	}

	// A malformed request gets "err" and the connection closes.
	raw, err := tls.Dial("tcp", s.Line.Addr(), s.Cert.ClientTLS())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(raw, "lots\n")
	line, _ := bufio.NewReader(raw).ReadString('\n')
	if line != "err\n" {
		t.Fatalf("reply %q to a malformed request, want err", line)
	}
}

func TestHTTPServers(t *testing.T) {
	s := startAll(t)
	for _, tc := range []struct {
		srv   *HTTPServer
		proto string
	}{{s.HTTP, "HTTP/2.0"}, {s.HTTP1, "HTTP/1.1"}} {
		tr := &http.Transport{TLSClientConfig: s.Cert.ClientTLS(), ForceAttemptHTTP2: true}
		resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(tc.srv.WorkURL(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
		if resp.StatusCode != 200 || string(body) != "ok\n" || resp.Proto != tc.proto {
			t.Errorf("%s: %s %s %q, want 200 %s \"ok\\n\"", tc.srv.URL(), resp.Status, resp.Proto, body, tc.proto)
		}
	}
}

func TestGRPCServer(t *testing.T) {
	s := startAll(t)
	g, err := StartGRPCServer(s.Cert, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	cc, err := grpc.NewClient(g.Addr(), grpc.WithTransportCredentials(credentials.NewTLS(s.Cert.ClientTLS())))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health check: %v %v", resp, err)
	}
}
