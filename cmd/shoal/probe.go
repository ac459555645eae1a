package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// probe dials the target's host:port once, so that an unreachable target
// fails within the dial timeout, saying which address and why, before any
// experiment starts; of a PostgreSQL target that names several hosts, the
// first that answers, as shoalpgx would. A TLS target's handshake is run
// alone next. It then asks the server one thing in its own protocol: a
// PostgreSQL target is logged into and asked SELECT 1, an HTTP one gets
// its request, a gRPC one the HTTP/2 preface. A server that
// accepts connections but never answers, a wrong password or a bad TLS
// setting then fail here once, not in every case after a timeout of its
// own.
func probe(ctx context.Context, t *target, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := dialFirst(ctx, t.Hosts)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within --dial-timeout %s", timeout)
		}
		return fmt.Errorf("cannot reach %s (from --target %s): %w", strings.Join(t.Hosts, ", "), t.Redacted, err)
	}
	if plainScheme(t.Scheme) != "" {
		// The handshake alone first, so that a port without TLS is named
		// as such rather than by whatever its first read returned.
		c, err = handshakeTLS(ctx, c, t)
	}
	switch {
	case err != nil:
	case t.Kind == targetPostgres && pgConnectExec != nil:
		c.Close()
		err = pgConnectExec(ctx, t.Raw, "select 1")
	case t.Kind == targetGRPC:
		err = probeHTTP2(ctx, c)
	case speaksHTTP(t.Kind):
		c.Close()
		err = probeHTTP(ctx, t)
	default:
		c.Close()
	}
	if err != nil {
		// Only the probe's own deadline is a timeout: the parent's end is
		// Ctrl-C, which the caller reports.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
			err = fmt.Errorf("no answer within --dial-timeout %s", timeout)
		}
		return fmt.Errorf("cannot use %s (from --target %s): %w", strings.Join(t.Hosts, ", "), t.Redacted, err)
	}
	return nil
}

// probeHTTP sends the target's request once and wants a 2xx answer, as
// every operation of the bench does: a wrong password or path then fails
// here once, naming the status, rather than in every case.
func probeHTTP(ctx context.Context, t *target) error {
	hr := targetHTTPRequest(t)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, hr.url, nil)
	if err != nil {
		return err
	}
	if hr.hasAuth {
		req.SetBasicAuth(hr.user, hr.password)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if err := resp.Body.Close(); err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}

// probeHTTP2 speaks the start of HTTP/2 on c (a TLS connection for
// grpcs://, its handshake done) and waits for the server's SETTINGS frame,
// which every gRPC server sends first.
func probeHTTP2(ctx context.Context, c net.Conn) error {
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	// The deadline covers --dial-timeout; Ctrl-C ends ctx before it, and
	// the read below would not see that without the close.
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	const preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	emptySettings := []byte{0, 0, 0, 4, 0, 0, 0, 0, 0}
	if _, err := io.WriteString(c, preface+string(emptySettings)); err != nil {
		return err
	}
	var hdr [9]byte
	if _, err := io.ReadFull(bufio.NewReader(c), hdr[:]); err != nil {
		return fmt.Errorf("no HTTP/2 answer: %w", err)
	}
	if hdr[3] != 4 {
		return fmt.Errorf("not an HTTP/2 server: its first frame has type %d, not SETTINGS", hdr[3])
	}
	return nil
}

// dialFirst returns a connection to the first of hosts that accepts one,
// or the last dial's error. A host that is a path is a Unix socket.
func dialFirst(ctx context.Context, hosts []string) (net.Conn, error) {
	var d net.Dialer
	err := errors.New("no host to dial")
	for _, addr := range hosts {
		network := "tcp"
		if strings.HasPrefix(addr, "/") {
			network = "unix"
		}
		var c net.Conn
		if c, err = d.DialContext(ctx, network, addr); err == nil {
			return c, nil
		}
	}
	return nil, err
}
