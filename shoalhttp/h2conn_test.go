package shoalhttp

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// newTestH2Conn dials addr and starts HTTP/2 on it as the Transport does.
func newTestH2Conn(t *testing.T, tr *Transport, addr string) *h2Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := newH2Conn(ctx, tr.h2, "http://"+addr, nc, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.close() })
	return c
}

// usable must say no once the connection is closed, even one that never
// carried a request (CanTakeNewRequest alone says yes to those), and once
// the server has sent GOAWAY.
func TestH2ConnUsableFollowsConnectionState(t *testing.T) {
	srv := startH2C(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	tr := newTestTransport(t, Options{H2CPriorKnowledge: true})

	fresh := newTestH2Conn(t, tr, srv.addr)
	if !fresh.usable() {
		t.Fatal("a new connection is not usable")
	}
	srv.hangUp() // before any request
	eventually(t, "a connection closed before its first request to turn unusable", func() bool { return !fresh.usable() })

	used := newTestH2Conn(t, tr, srv.addr)
	req, err := http.NewRequest("GET", srv.url()+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	used.markStarted()
	resp, err := used.cc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if !used.usable() {
		t.Fatal("a connection that has served a request is not usable")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.base.Shutdown(ctx); err != nil { // GOAWAY on every connection
		t.Fatal(err)
	}
	eventually(t, "a connection to turn unusable after GOAWAY", func() bool { return !used.usable() })
}

// MaxStreamsPerConn caps the stream limit the server announces.
func TestMaxStreamsPerConnCapsTheServersLimit(t *testing.T) {
	if got := (&h2Conn{maxStreams: 10}).streamLimit(100); got != 10 {
		t.Fatalf("server 100, MaxStreamsPerConn 10: %d", got)
	}
}
