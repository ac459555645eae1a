package peek

import (
	"crypto/tls"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/loopback"
)

// eventually peeks until want shows up: the kernel delivers loopback data
// and FINs asynchronously to the sender's return.
func eventually(t *testing.T, p *Peeker, want Result) byte {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, b := p.Peek()
		if got == want {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("Peek = %v, want %v", got, want)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPeek(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no non-blocking peek on this platform")
	}
	client, server := loopback.Pair(t)
	var p Peeker
	p.Init(client)
	if got, _ := p.Peek(); got != Quiet {
		t.Fatalf("idle connection: Peek = %v, want Quiet", got)
	}
	if _, err := server.Write([]byte("E!")); err != nil {
		t.Fatal(err)
	}
	if b := eventually(t, &p, Data); b != 'E' {
		t.Fatalf("first byte %q, want 'E'", b)
	}
	// Peeking consumes nothing.
	buf := make([]byte, 2)
	if n, err := client.Read(buf); err != nil || string(buf[:n]) != "E!" {
		t.Fatalf("Read after Peek = %q, %v", buf[:n], err)
	}
	server.Close()
	eventually(t, &p, Closed)
	client.Close()
	if got, _ := p.Peek(); got != Closed {
		t.Fatalf("after Close: Peek = %v, want Closed", got)
	}
}

func TestPeekThroughTLS(t *testing.T) {
	client, _ := loopback.Pair(t)
	var p Peeker
	p.Init(tls.Client(client, &tls.Config{InsecureSkipVerify: true}))
	if !p.TLS() {
		t.Fatal("TLS() = false for a *tls.Conn")
	}
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		return
	}
	if got, _ := p.Peek(); got != Quiet {
		t.Fatalf("idle connection under TLS: Peek = %v, want Quiet (the raw connection is peeked)", got)
	}
}

func TestPeekWithoutDescriptor(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	var p Peeker
	p.Init(a)
	if got, _ := p.Peek(); got != Unknown {
		t.Fatalf("net.Pipe: Peek = %v, want Unknown", got)
	}
}

// pgconn's background reader can be left blocked in Read on an idle
// connection. A Peek must not wait for it: that would hang the acquire
// that checks the connection, past any context.
func TestPeekBesideABlockedRead(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no non-blocking peek on this platform")
	}
	client, server := loopback.Pair(t)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 1)
		client.Read(buf) // blocks until the server writes or the test closes
	}()
	time.Sleep(20 * time.Millisecond) // let the Read block in the poller

	var p Peeker
	p.Init(client)
	peeked := make(chan Result, 1)
	go func() {
		got, _ := p.Peek()
		peeked <- got
	}()
	select {
	case got := <-peeked:
		if got != Quiet {
			t.Errorf("Peek beside a blocked Read = %v, want Quiet", got)
		}
	case <-time.After(5 * time.Second):
		t.Error("Peek waited for another goroutine's blocked Read")
		server.Write([]byte("x")) // end the Read, and with it the stuck Peek
		<-peeked
	}
	server.Write([]byte("x"))
	<-readDone
}
