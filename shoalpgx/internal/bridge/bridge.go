// Package bridge carries what shoalpgx's database/sql driver
// (shoalpgx/stdlib) must do to a pooled connection and shoalpgx keeps from
// its users. shoalpgx fills it in at init; stdlib, which may use only
// shoalpgx's exported API otherwise, calls it.
package bridge

import (
	"context"
	"time"
)

// CheckIdle checks conn, a *shoalpgx.Conn its holder left idle for idle,
// as the pool checks an idle connection before handing it out: with its
// settings, a look at the socket after a millisecond of idleness, and a
// ping when the look cannot tell or after HealthCheckAfter; nothing with
// HealthCheckAfter 0. An error means the connection is not fit to use.
//
// The ping is not cut short when ctx ends, as the pool's acquire does not
// cut its own: pgx would close a healthy connection. CheckIdle returns
// ctx's error at once then, with left true, and the ping goes on without
// the holder, who no longer has conn (as after its Release) and must drop
// it: if the ping answers, tidy (when not nil) runs, on the ping's
// goroutine or, should the ping end as ctx does, before CheckIdle returns,
// and conn goes back to the pool as if its holder had released it; if
// not, conn is closed. conn is an any because this package cannot import
// shoalpgx.
var CheckIdle func(ctx context.Context, conn any, idle time.Duration, tidy func()) (left bool, err error)

// Retired reports whether the pool has retired conn, a *shoalpgx.Conn,
// since it was dialled: a Reset (a failover's included), or its host's
// retirement. Released, such a connection is closed; its holder must not
// pass it on to another user either.
var Retired func(conn any) bool

// Refused reports whether conn, a *shoalpgx.Conn, had a write refused as
// read-only that the pool has yet to judge (it asks the server once the
// session is out of its transaction, at the release): such a connection
// must go back to the pool before anyone else uses it.
var Refused func(conn any) bool
