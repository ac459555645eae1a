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

// MaxStreamsPerConn caps the stream limit the server announces, and the
// limit is at most 1000 whatever the server and MaxStreamsPerConn say
// (settings.md: "the server's limit, at most 1000").
func TestMaxStreamsPerConnCapsTheServersLimit(t *testing.T) {
	for _, tc := range []struct {
		perConn int
		server  uint32
		want    int
	}{
		{10, 100, 10},
		{10, 7, 7},
		{0, 100, 100},
		{0, 0, 1000},       // the server sets no limit
		{0, 1 << 20, 1000}, // the server allows more than 1000
		{5000, 1 << 20, 1000},
		{5000, 0, 1000},
	} {
		if got := (&h2Conn{maxStreams: tc.perConn}).streamLimit(tc.server); got != tc.want {
			t.Errorf("server %d, MaxStreamsPerConn %d: %d, want %d", tc.server, tc.perConn, got, tc.want)
		}
	}
}
