package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
)

// plainScheme is the scheme without TLS of a target reached over TLS
// ("http" for "https"), or "" for a target that is not.
func plainScheme(scheme string) string {
	switch scheme {
	case "https", "clickhouse+https", "influxdb+https":
		return strings.TrimSuffix(scheme, "s")
	case "grpcs":
		return "grpc"
	}
	return ""
}

// handshakeTLS runs a TLS target's handshake on c, closing c if it fails.
// A port that speaks plain HTTP or TCP fails it with Go's "EOF",
// "connection reset by peer" or "first record does not look like a TLS
// handshake", none of which says what is wrong: those are told as a
// handshake that got no TLS answer, with the scheme to try instead.
func handshakeTLS(ctx context.Context, c net.Conn, t *target) (net.Conn, error) {
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	protos := []string{"h2", "http/1.1"}
	if t.Kind == targetGRPC {
		protos = []string{"h2"}
	}
	tc := tls.Client(c, &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.URL.Hostname(), NextProtos: protos})
	err := tc.HandshakeContext(ctx)
	if err == nil {
		return tc, nil
	}
	c.Close()
	try := fmt.Sprintf("try %s:// instead of %s://", plainScheme(t.Scheme), t.Scheme)
	var rh tls.RecordHeaderError
	switch {
	case errors.As(err, &rh) && bytes.HasPrefix(rh.RecordHeader[:], []byte("HTTP/")):
		return nil, fmt.Errorf("the server answered the TLS handshake in plain HTTP: %s", try)
	case errors.As(err, &rh):
		return nil, fmt.Errorf("the server answered the TLS handshake with something that is not TLS (is the port plain HTTP or TCP?): %s", try)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		return nil, fmt.Errorf("the server closed the connection without answering the TLS handshake (is the port plain HTTP or TCP?): %s", try)
	}
	return nil, err
}
