package shoalhttp

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/loopback"
)

// Writes, queued or not, arrive whole and in order, and the writer
// goroutine batches them.
func TestCoalescingConnKeepsOrder(t *testing.T) {
	client, server := loopback.Pair(t)
	var busy atomic.Bool
	c := coalesce(client, busy.Load).(*coalescingConn)
	var want bytes.Buffer
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(server)
		got <- b
	}()
	for i := range 5000 {
		busy.Store(i%100 >= 10) // runs of direct writes between queued ones
		p := fmt.Appendf(nil, "frame %d;", i)
		want.Write(p)
		if n, err := c.Write(p); n != len(p) || err != nil {
			t.Fatalf("write %d: %d, %v", i, n, err)
		}
	}
	// Let the writer goroutine finish before closing: Close drops what is
	// still queued.
	eventually(t, "the queue to drain", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return !c.flushing
	})
	c.Close()
	if b := <-got; !bytes.Equal(b, want.Bytes()) {
		t.Fatalf("the peer read %d bytes, want %d in order", len(b), want.Len())
	}
}

// A peer that stops reading holds writers back once maxCoalesced bytes are
// queued: the queue never grows past it.
func TestCoalescingConnBoundsItsQueue(t *testing.T) {
	client, _ := loopback.Pair(t) // the server end never reads
	c := coalesce(client, func() bool { return true }).(*coalescingConn)
	chunk := make([]byte, 16<<10)
	var written atomic.Int64
	done := make(chan error, 1)
	go func() {
		for range 1024 { // 16 MiB: more than the socket buffers and the queue hold
			if _, err := c.Write(chunk); err != nil {
				done <- err
				return
			}
			written.Add(int64(len(chunk)))
		}
		done <- nil
	}()
	eventually(t, "the writer to be held back", func() bool {
		before := written.Load()
		time.Sleep(20 * time.Millisecond)
		return written.Load() == before
	})
	c.mu.Lock()
	queued := len(c.queued)
	c.mu.Unlock()
	if queued > maxCoalesced {
		t.Errorf("%d bytes queued, bound %d", queued, maxCoalesced)
	}
	c.Close() // wakes the held writer with an error
	c.mu.Lock()
	flushing := c.flushing
	c.mu.Unlock()
	if flushing {
		t.Error("Close returned while the writer goroutine was still writing")
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("16 MiB written to a peer that reads nothing")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a writer held back by the bound did not wake at Close")
	}
}

// A failed write fails the later ones and closes the connection, so that
// x/net's reader stops too.
func TestCoalescingConnFailsAfterAWriteError(t *testing.T) {
	client, server := loopback.Pair(t)
	c := coalesce(client, func() bool { return true }).(*coalescingConn)
	server.Close()
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		_, err = c.Write(make([]byte, 4096))
		time.Sleep(time.Millisecond)
	}
	if err == nil {
		t.Fatal("writes to a closed peer kept succeeding")
	}
	if _, rerr := client.Read(make([]byte, 1)); !errors.Is(rerr, net.ErrClosed) {
		t.Errorf("after the write error, reading the connection: %v, want it closed", rerr)
	}
	if _, err := c.Write([]byte("x")); err == nil {
		t.Error("a write after the error succeeded")
	}
}

// The wrapper offers x/net a TLS state exactly when the connection has
// one: a response over TLS carries it, one over h2c does not.
func TestCoalescedResponsesReportTLSOnlyOverTLS(t *testing.T) {
	srv, _, tlsCfg := newH2TLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}), 100)
	tr := newTestTransport(t, Options{TLSClientConfig: tlsCfg})
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 {
		t.Errorf("over TLS: %s, TLS state %v", resp.Proto, resp.TLS)
	}

	h2cSrv := startH2C(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	h2c := newTestTransport(t, Options{H2CPriorKnowledge: true})
	resp, err = (&http.Client{Transport: h2c}).Get(h2cSrv.url() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.TLS != nil {
		t.Errorf("over h2c: %s, TLS state %v, want none", resp.Proto, resp.TLS)
	}
}

// Writes are batched while a connection carries more than four requests.
func TestCoalesceAboveFourInFlight(t *testing.T) {
	c := &h2Conn{}
	c.inFlight.Store(4)
	if c.othersInFlight() {
		t.Error("4 in flight: batched")
	}
	c.inFlight.Store(5)
	if !c.othersInFlight() {
		t.Error("5 in flight: not batched")
	}
}
