package main

import (
	"context"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// leavePG ends conn's session and waits, while ctx lasts, for the server
// to close the socket. A backend gives up its slot of max_connections and
// its row of pg_stat_activity before its socket closes, so that once the
// preflight has left, the room it counted without itself is there for
// the sweep's first pool. pgx's Close does not wait for that.
func leavePG(ctx context.Context, conn *pgx.Conn) {
	defer conn.Close(context.Background())
	if conn.IsClosed() || ctx.Err() != nil {
		return
	}
	nc := conn.PgConn().Conn()
	stop := context.AfterFunc(ctx, func() { _ = nc.SetReadDeadline(time.Now()) })
	defer stop()
	msg, err := (&pgproto3.Terminate{}).Encode(nil)
	if err != nil {
		return
	}
	if _, err := nc.Write(msg); err != nil {
		return
	}
	// Anything the server still sends is of no use; the end of the
	// stream is what this waits for.
	_, _ = io.Copy(io.Discard, nc)
}
