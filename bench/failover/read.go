package main

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// readSQL asks the server that answers which one it is and whether it is a
// standby as it answers: the port is the server's own (through the proxy
// too), and pg_is_in_recovery settles the role while a promotion is under
// way, when the run alone cannot tell.
const readSQL = "SELECT inet_server_port(), pg_is_in_recovery()"

// read is one query as its reader saw it.
type read struct {
	start   time.Duration // since the run began
	end     time.Duration
	port    int  // the answering server's; 0 when the read failed
	standby bool // the server was in recovery when it answered
	err     error
}

// readPool is what a reader needs of a contender's reads.
type readPool interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Close()
}

// readLoop reads through rp until the run's end, one query at a time, each
// with deadline and pause after it, and returns what it saw. The pause
// keeps the readers from taking the writers' CPU on a small machine.
func readLoop(ctx context.Context, rp readPool, end *runEnd, deadline, pause time.Duration) []read {
	var rs []read
	begin := end.begin
	for end.running() {
		r := read{start: time.Since(begin)}
		rctx, cancel := context.WithTimeout(ctx, deadline)
		r.err = rp.QueryRow(rctx, readSQL).Scan(&r.port, &r.standby)
		cancel()
		r.end = time.Since(begin)
		if r.err != nil {
			r.port, r.standby = 0, false
		}
		rs = append(rs, r)
		time.Sleep(min(pause, end.left()))
	}
	return rs
}
