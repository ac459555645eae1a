package shoalpgx

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/tlsfail"
)

// dialMarked is the core's Dial: dial, with an error that no retry can mend
// marked shoal.Permanent, so that the pool fails its callers with it at once
// and dials again every few seconds rather than four times a second (a
// wrong password after a rotation would otherwise be an authentication
// storm against the server).
func (p *Pool) dialMarked(ctx context.Context) (*pooledConn, error) {
	pc, err := p.dial(ctx)
	if err != nil && permanent(err) {
		return nil, shoal.Permanent(err)
	}
	return pc, err
}

// permanent reports whether a connect's error is one no retry can mend: the
// server refused the role or its password (SQLSTATE class 28), the database
// does not exist (3D000) or the role may not connect to it (42501), or TLS
// cannot work (internal/tlsfail): a certificate the client rejects, a
// handshake the server refuses, a server that refuses TLS which sslmode
// requires.
func permanent(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "28") || pgErr.Code == "3D000" || pgErr.Code == "42501"
	}
	if cause, _ := tlsfail.Classify(err); cause.Permanent() {
		return true
	}
	// pgconn's own words for a server that will not speak TLS, which
	// sslmode=require (or verify-*) insists on; it has no error type.
	return strings.Contains(err.Error(), "server refused TLS connection")
}
