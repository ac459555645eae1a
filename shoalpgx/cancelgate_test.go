package shoalpgx

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// serverMsg is a backend message: its type, its length and body.
func serverMsg(typ byte, body string) []byte {
	b := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(4+len(body)))
	return append(b, body...)
}

// The gate tells a statement running at the server from none by the
// server's messages, however pgx's reads cut them: a read whose last
// message is a ReadyForQuery, or asynchronous messages after one, leaves
// none running; anything else leaves it running.
func TestGateBusyAcrossReads(t *testing.T) {
	var (
		ready   = serverMsg('Z', "I")
		done    = serverMsg('C', "SELECT 1\x00")
		row     = serverMsg('D', "\x00\x01\x00\x00\x00\x01x")
		notify  = serverMsg('A', "\x00\x00\x30\x39chan\x00payload\x00")
		notice  = serverMsg('N', "SNOTICE\x00Mhello\x00\x00")
		param   = serverMsg('S', "TimeZone\x00UTC\x00")
		bigRow  = serverMsg('D', "\x00\x01\x00\x00\x01\x2c"+strings.Repeat("Z\x00\x00\x00\x05I", 50)) // 300 bytes of data
		fakeRFQ = serverMsg('D', "\x00\x01\x00\x00\x00\x06Z\x00\x00\x00\x05I")                        // a row whose last bytes look like a ReadyForQuery
	)
	for _, tc := range []struct {
		name   string
		stream [][]byte
		busy   bool
	}{
		{"answer", [][]byte{row, done, ready}, false},
		{"notification after the answer", [][]byte{row, done, ready, notify}, false},
		{"asynchronous messages after the answer", [][]byte{done, ready, notify, notice, param, notify}, false},
		{"large row, then the answer", [][]byte{bigRow, done, ready, notify}, false},
		{"notification before the answer", [][]byte{notify}, true},
		{"rows", [][]byte{row, row, bigRow, row}, true},
		{"a row that ends like a ReadyForQuery", [][]byte{fakeRFQ}, true},
		{"a notice in the statement", [][]byte{row, notice}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stream := bytes.Join(tc.stream, nil)
			check := func(reads ...[]byte) {
				t.Helper()
				g := &cancelGate{}
				g.busy.Store(true) // the statement's write
				for _, b := range reads {
					g.noteRead(b)
				}
				if got := g.busy.Load(); got != tc.busy {
					t.Fatalf("busy %v after reads of %v bytes, want %v", got, lens(reads), tc.busy)
				}
			}
			check(stream)
			for i := 1; i < len(stream); i++ {
				check(stream[:i], stream[i:])
			}
			// Three reads, the first cut short within 64 bytes: enough
			// for every message's header to be cut, at a bearable count.
			for i := 1; i < len(stream) && i < 64; i++ {
				for j := i + 1; j < len(stream); j++ {
					check(stream[:i], stream[i:j], stream[j:])
				}
			}
			bytewise := make([][]byte, len(stream))
			for i := range stream {
				bytewise[i] = stream[i : i+1]
			}
			check(bytewise...)
		})
	}
}

func lens(reads [][]byte) []int {
	n := make([]int, len(reads))
	for i, b := range reads {
		n[i] = len(b)
	}
	return n
}

// joinConn is a connection whose next Read, once join is set, waits until
// what the server sent ends with join's bytes and returns all of it at
// once: messages the server sent apart, read together.
type joinConn struct {
	net.Conn
	join atomic.Pointer[[]byte]
	held []byte
}

func (c *joinConn) Read(b []byte) (int, error) {
	if want := c.join.Swap(nil); want != nil {
		buf := make([]byte, 4096)
		for !bytes.HasSuffix(c.held, *want) {
			n, err := c.Conn.Read(buf)
			c.held = append(c.held, buf[:n]...)
			if err != nil {
				return 0, err
			}
		}
	}
	if len(c.held) > 0 {
		n := copy(b, c.held)
		c.held = c.held[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// A notification PostgreSQL sends a listening session right after a
// statement's ReadyForQuery, read with it, leaves no statement running: a
// WaitForNotification after it is cut off at its deadline. Were it taken
// for a statement, the wait would be cancelled instead, a request the idle
// backend ignores, and would end only at CancelTimeout, a minute here.
func TestCancelWaitAfterANotificationReadWithTheAnswer(t *testing.T) {
	var jc atomic.Pointer[joinConn]
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 1
		c.CancelTimeout = time.Minute
		dial := c.ConnConfig.DialFunc
		c.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			j := &joinConn{Conn: nc}
			jc.Store(j)
			return j, nil
		}
	})
	ctx := pgtest.Ctx(t)
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	channel := fmt.Sprintf("shoal_gate_%d", time.Now().UnixNano())
	if _, err := c.Exec(ctx, "LISTEN "+channel); err != nil {
		t.Fatal(err)
	}
	pg := c.Conn().PgConn()
	admin := pgtest.AdminConn(t)

	// The statement is written and answered; once the server shows it done,
	// the notification can only come after its ReadyForQuery, and the
	// joinConn hands pgx both in one read.
	sql := "SELECT 1 -- " + channel
	mrr := pg.Exec(ctx, sql)
	pgtest.WaitFor(t, 10*time.Second, "the statement to be done at the server", func() bool {
		var done bool
		err := admin.QueryRow(ctx, "SELECT count(*) > 0 FROM pg_stat_activity WHERE pid = $1 AND state = 'idle' AND query = $2", pg.PID(), sql).Scan(&done)
		if err != nil {
			t.Fatal(err)
		}
		return done
	})
	join := []byte(channel + "\x00hello\x00")
	jc.Load().join.Store(&join)
	if _, err := admin.Exec(ctx, "SELECT pg_notify($1, 'hello')", channel); err != nil {
		t.Fatal(err)
	}
	if _, err := mrr.ReadAll(); err != nil {
		t.Fatal(err)
	}
	if findGate(pg.Conn()).busy.Load() {
		t.Error("with the statement answered, the gate still takes one for running")
	}
	if n, err := c.Conn().WaitForNotification(ctx); err != nil || n.Payload != "hello" {
		t.Fatalf("the notification read with the answer: %v, %v", n, err)
	}

	wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	stop := time.AfterFunc(10*time.Second, func() { _ = pg.Conn().Close() })
	defer stop.Stop()
	start := time.Now()
	_, err = c.Conn().WaitForNotification(wctx)
	if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took > 5*time.Second {
		t.Fatalf("WaitForNotification with a 50ms deadline returned %v after %s, want context.DeadlineExceeded at the deadline", err, took)
	}
	if _, err := c.Exec(ctx, "SELECT 1"); err != nil {
		t.Errorf("the connection after the wait: %v", err)
	}
}
