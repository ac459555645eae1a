package main

import (
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// postgresDSN returns the test server's URL, skipping without one.
func postgresDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("SHOAL_TEST_POSTGRES")
	if dsn == "" {
		skipOrFail(t, "SHOAL_TEST_POSTGRES is not set")
	}
	return dsn
}

// TestSweepRunsTheQueryOnceFirst: a typo fails once with the server's own
// error, before any configuration runs; a statement that writes is
// refused unless --allow-writes.
func TestSweepRunsTheQueryOnceFirst(t *testing.T) {
	dsn := postgresDSN(t)
	r := runShoal(t, "sweep", "--target", dsn, "--query", "SELEC 1")
	r.wantCode(t, exitFailed)
	if !strings.Contains(r.stderr, "SQLSTATE 42601") || strings.Contains(r.stdout, "FAILED") {
		t.Errorf("want the server's syntax error once and no case run:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
	r = runShoal(t, "sweep", "--target", dsn, "--query", "DROP TABLE shoal_no_such_table")
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "writes") || !strings.Contains(r.stderr, "SQLSTATE 25006") || !strings.Contains(r.stderr, "--allow-writes") {
		t.Errorf("a writing query was not refused with the server's reason:\n%s", r.stderr)
	}
}

// TestSweepComparesMaxConnsWithTheServer: more connections than
// max_connections is a usage error naming the server's limit, not twenty
// seconds of timeouts per configuration.
func TestSweepComparesMaxConnsWithTheServer(t *testing.T) {
	r := runShoal(t, "sweep", "--target", postgresDSN(t), "--max-conns", "1024")
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "max_connections") || !strings.Contains(r.stderr, "or fewer") {
		t.Errorf("stderr does not name the server's limit:\n%s", r.stderr)
	}
}

// TestSilentHTTPAndGRPCFailOnce: https and grpc targets that accept and
// never answer fail the probe once, within the dial timeout.
func TestSilentHTTPAndGRPCFailOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	for _, target := range []string{"https://" + ln.Addr().String(), "grpc://" + ln.Addr().String(), "clickhouse+http://" + ln.Addr().String()} {
		var r result
		took := elapsed(func() { r = runShoal(t, "bench", "--quick", "--dial-timeout", "400ms", "--target", target) })
		r.wantCode(t, exitFailed)
		if !strings.Contains(r.stderr, "no answer within --dial-timeout 400ms") || strings.Contains(r.stdout, "FAILED") || took > 2*time.Second {
			t.Errorf("%s: took %v\nstdout: %s\nstderr: %s", target, took, r.stdout, r.stderr)
		}
	}
}

// tooManyClients is a proxy to PostgreSQL that passes the first allow
// connections through and answers every later one as a full server does,
// with FATAL 53300 "sorry, too many clients already".
func tooManyClients(t *testing.T, upstream string, allow int32) string {
	t.Helper()
	var n atomic.Int32
	return serveLoopback(t, func(c net.Conn) {
		if n.Add(1) > allow {
			var hdr [4]byte // the startup message: its length, then the rest
			if _, err := io.ReadFull(c, hdr[:]); err != nil {
				return
			}
			_, _ = io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(hdr[:])-4))
			msg, _ := (&pgproto3.ErrorResponse{Severity: "FATAL", Code: "53300", Message: "sorry, too many clients already"}).Encode(nil)
			_, _ = c.Write(msg)
			return
		}
		passThrough(c, upstream)
	})
}

// TestTooManyClientsShowsTheServersError: a pool the server will not let
// open all its connections fails at once with PostgreSQL's own words and
// SQLSTATE 53300, not "context deadline exceeded" after 20 seconds.
func TestTooManyClientsShowsTheServersError(t *testing.T) {
	u, err := url.Parse(postgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Host = tooManyClients(t, u.Host, 4) // the probe, the preflight and two of the pool's four
	var r result
	took := elapsed(func() {
		r = runShoal(t, append([]string{"sweep", "--target", u.String(), "--max-conns", "4", "--workers", "8"}, testTimes...)...)
	})
	r.wantCode(t, exitFailed)
	if !strings.Contains(r.stdout+r.stderr, "too many clients already (SQLSTATE 53300)") || took > 15*time.Second {
		t.Errorf("took %v; want the server's 53300 error:\nstdout: %s\nstderr: %s", took, r.stdout, r.stderr)
	}
}

// TestSmallThings: help for an unknown command is an error, version
// prints, and a duration without a unit says what to write, never a
// negative one.
func TestSmallThings(t *testing.T) {
	r := runShoal(t, "help", "nope")
	r.wantCode(t, exitUsage)
	r = runShoal(t, "version")
	r.wantCode(t, exitOK)
	if !strings.HasPrefix(r.stdout, "shoal ") || !strings.Contains(r.stdout, "go1") {
		t.Errorf("version printed %q", r.stdout)
	}
	r = runShoal(t, "bench", "--duration", "5")
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "--duration 5: a duration needs a unit, such as 5s") {
		t.Errorf("stderr: %s", r.stderr)
	}
	r = runShoal(t, "bench", "--duration", "-5")
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "--duration -5: a duration is not negative and needs a unit, such as 5s") {
		t.Errorf("stderr: %s", r.stderr)
	}
	// 2, 5 and 10 in all, in the partitions that divide them, and the
	// default (4 connections in 2 partitions) added.
	var names []string
	for _, c := range sweepTable(sweepTotals(10, false), 4, 2) {
		names = append(names, c.name())
	}
	if got := strings.Join(names, " "); got != "1x2 2x1 2x2 (default) 1x5 1x10 2x5" {
		t.Errorf("sweepTable(sweepTotals(10, false), 4, 2) = %s", got)
	}
}
