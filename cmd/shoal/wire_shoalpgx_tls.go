package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// tlsAdvice is what to change when the target's sslmode asks for TLS of
// a server that has none.
const tlsAdvice = "try sslmode=prefer (TLS where the server offers it) or sslmode=disable, or turn TLS on at the server"

// connectPG is pgx.ConnectConfig, with a server that refused TLS on every
// attempt told as such: pgx's own words ("tls error: server refused TLS
// connection") leave the user to guess which side to change.
func connectPG(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err == nil || !refusedTLS(err) {
		return conn, err
	}
	return nil, fmt.Errorf("the server does not offer TLS, which the target's sslmode requires: %s", tlsAdvice)
}

// refusedTLS reports whether each attempt of a pgx connect error (one a
// host) ended with the server refusing TLS. pgx has no error value for
// it, only its text. When any attempt failed otherwise, that error is the
// one to show, so the answer is then false.
func refusedTLS(err error) bool {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return false
	}
	inner := ce.Unwrap()
	attempts := []error{inner}
	if j, ok := inner.(interface{ Unwrap() []error }); ok {
		attempts = j.Unwrap()
	}
	for _, a := range attempts {
		if a == nil || !strings.HasSuffix(a.Error(), "server refused TLS connection") {
			return false
		}
	}
	return len(attempts) > 0
}
