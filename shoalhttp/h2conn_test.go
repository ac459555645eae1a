//lint:file-ignore SA1019 these tests need x/net's per-connection ServeConn (to hang up one connection, or send GOAWAY on it), which net/http does not offer.

package shoalhttp

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// h2cServer serves HTTP/2 with prior knowledge on a loopback listener and
// hands each accepted connection's server side to conns.
func h2cServer(t *testing.T) (addr string, base *http.Server, conns <-chan net.Conn) {
	t.Helper()
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	base = &http.Server{Handler: handler}
	h2s := &http2.Server{}
	if err := http2.ConfigureServer(base, h2s); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 4)
	var serving sync.WaitGroup
	serving.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
			serving.Go(func() { h2s.ServeConn(c, &http2.ServeConnOpts{BaseConfig: base, Handler: handler}) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		for len(accepted) > 0 {
			(<-accepted).Close()
		}
		serving.Wait()
	})
	return ln.Addr().String(), base, accepted
}

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
	addr, base, accepted := h2cServer(t)
	tr := newTestTransport(t, Options{H2CPriorKnowledge: true})

	fresh := newTestH2Conn(t, tr, addr)
	if !fresh.usable() {
		t.Fatal("a new connection is not usable")
	}
	(<-accepted).Close() // the server hangs up before any request
	eventually(t, "a connection closed before its first request to turn unusable", func() bool { return !fresh.usable() })

	used := newTestH2Conn(t, tr, addr)
	<-accepted
	req, err := http.NewRequest("GET", "http://"+addr+"/", nil)
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
	if err := base.Shutdown(ctx); err != nil { // GOAWAY on every connection
		t.Fatal(err)
	}
	eventually(t, "a connection to turn unusable after GOAWAY", func() bool { return !used.usable() })
}
