package shoal

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// closeCounter has the Close method of an io.Closer.
type closeCounter struct{ closes *atomic.Int32 }

func (c *closeCounter) Close() error { c.closes.Add(1); return nil }

// quietCloser has a Close that returns nothing.
type quietCloser struct{ closes *atomic.Int32 }

func (c quietCloser) Close() { c.closes.Add(1) }

// A Config without Close closes connections whose type has a Close method:
// a pool of net.Conn (an interface type) closes its connections, and so does
// a pool of a type whose Close returns nothing.
func TestConnectionsWithACloseMethodAreClosed(t *testing.T) {
	t.Run("net.Conn", func(t *testing.T) {
		peers := make(chan net.Conn, 4)
		p, err := New(Config[net.Conn]{MaxConns: 2, Dial: func(context.Context) (net.Conn, error) {
			client, server := net.Pipe()
			peers <- server
			return client, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		a, b := mustAcquireAny(t, p), mustAcquireAny(t, p)
		a.Release()
		b.Discard()
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		close(peers)
		for server := range peers {
			_ = server.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := server.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
				t.Errorf("the server's end read %v, want EOF: the pool left its connection open", err)
			}
		}
	})
	t.Run("Close() error", func(t *testing.T) {
		var closes atomic.Int32
		p, err := New(Config[*closeCounter]{MaxConns: 1, Dial: func(context.Context) (*closeCounter, error) {
			return &closeCounter{closes: &closes}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		mustAcquireAny(t, p).Release()
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if closes.Load() != 1 {
			t.Fatalf("%d closes, want 1", closes.Load())
		}
	})
	t.Run("Close()", func(t *testing.T) {
		var closes atomic.Int32
		p, err := New(Config[quietCloser]{MaxConns: 1, Dial: func(context.Context) (quietCloser, error) {
			return quietCloser{closes: &closes}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		mustAcquireAny(t, p).Release()
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if closes.Load() != 1 {
			t.Fatalf("%d closes, want 1", closes.Load())
		}
	})
	// A nil interface value from a Dial that returned no error has nothing
	// to close, and must not panic.
	t.Run("nil net.Conn", func(t *testing.T) {
		p, err := New(Config[net.Conn]{MaxConns: 1, Dial: func(context.Context) (net.Conn, error) { return nil, nil }})
		if err != nil {
			t.Fatal(err)
		}
		mustAcquireAny(t, p).Discard()
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := p.Stats(); s.Closed != 1 {
			t.Fatalf("Closed = %d, want 1", s.Closed)
		}
	})
}

func mustAcquireAny[T any](t *testing.T, p *Pool[T]) Lease[T] {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
