package main

import (
	"context"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
)

// closeTimeout bounds a close's wait for the server.
const closeTimeout = 5 * time.Second

// terminate is the protocol's Terminate message: 'X' and its length.
var terminate = []byte{'X', 0, 0, 0, 4}

// closeConn closes c and returns once the server has ended its backend,
// which is when the pool gives the connection's permit back. pgx's Close
// hangs up right after Terminate and the backend exits a moment later, so
// a tenant dialling into the freed permit made the server count 41 under
// the cap of 40. The server closes the socket as the backend exits:
// reading to EOF after Terminate waits exactly that long (closeTimeout at
// most), as shoalpgx's budgeted pools do.
func closeConn(c *pgx.Conn) error {
	hc, err := c.PgConn().Hijack()
	if err != nil { // busy or closed already
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		return c.Close(ctx)
	}
	nc := hc.Conn
	defer nc.Close()
	if err := nc.SetDeadline(time.Now().Add(closeTimeout)); err != nil {
		return err
	}
	if _, err := nc.Write(terminate); err != nil {
		return nil // gone already
	}
	_, _ = io.Copy(io.Discard, nc)
	return nil
}
