package shoalhttp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/syncbuf"
)

// Close cuts short an https origin's first dial, which the Transport makes
// before the origin's pool exists to learn its protocol, as the core
// pool's Close cuts its own dials short: a server that accepts the TCP
// connection and never answers the TLS handshake holds up neither Close
// nor the request, which fails as one sent after Close does. The dial cut
// short logs nothing (operating.md: "a dial that Close cuts short logs
// nothing").
func TestCloseCutsFirstDialShort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c // held open, silent, until the test ends
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		select {
		case c := <-accepted:
			c.Close()
		default:
		}
	})
	var logs syncbuf.Buffer
	tr, err := NewTransport(Options{Proxy: NoProxy, Logger: newTestLogger(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		req, err := http.NewRequest(http.MethodGet, "https://"+ln.Addr().String()+"/", nil)
		if err != nil {
			errc <- err
			return
		}
		_, err = tr.RoundTrip(req)
		errc <- err
	}()
	c := <-accepted // the handshake has begun
	accepted <- c
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := tr.Close(ctx); err != nil {
		t.Errorf("Close during a TLS handshake that gets no answer: %v, want nil at once", err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, shoal.ErrClosed) {
			t.Errorf("the request cut short by Close: %v, want shoal.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the request still waits for its handshake 5s after Close")
	}
	if strings.Contains(logs.String(), "dial") {
		t.Errorf("the dial Close cut short was logged:\n%s", logs.String())
	}
}
