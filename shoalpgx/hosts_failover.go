package shoalpgx

import (
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The pool's part in a failover. With several hosts in the connection
// string and target_session_attrs asking for a writable one, two signs say
// that the primary has moved: a dial that lands on another host than the
// one before it (noteHost), and a write refused with
// read_only_sql_transaction (SQLSTATE 25006), which says that the
// connection's host is no longer the primary (fenced or demoted with its
// sessions still open). On either the pool resets (Pool.Reset), so that its
// other connections to that host, healthy as they look, are closed too, and
// new ones are dialled through the host list to whichever host qualifies
// now. The look at an idle connection in the background (hosts_watch.go)
// learns of a fence before a write does.
//
// A broken connection is not a sign of its own: it is replaced, and the
// look at the socket before each acquire already keeps the pool from
// handing out the others a stopped server closed, while one session that
// the server ended (pg_terminate_backend, idle_session_timeout) must not
// cost the pool all its healthy connections.

// resetsOnReadOnly reports whether a pool with target t on cc resets on
// SQLSTATE 25006: with several hosts, and target_session_attrs read-write
// or primary.
func resetsOnReadOnly(t target, cc *pgx.ConnConfig) bool {
	return cc != nil && t.writable() && severalHosts(cc)
}

// noteErr resets the pool when err, returned by a statement on pc, says
// pc's host is no longer the primary. Only a connection dialled since the
// pool's last reset can reset it again: the older ones are retired
// already, and each of their errors would otherwise close the new
// primary's fresh connections too.
func (pc *pooledConn) noteErr(err error) {
	if err == nil || !pc.pool.resetOnReadOnly {
		return
	}
	if pc.resetGen == pc.pool.resets.Load() && isReadOnlyErr(err) {
		pc.pool.Reset()
	}
}

// noteHost resets the pool when a staggered dial lands on another host
// than the one before it: with read-write or primary at most one host
// qualifies, so the primary has moved, and the pool's connections to the
// old one (fenced, demoted, or silent) would take callers' statements
// until each failed on its own. The new connection, not in the pool yet,
// is kept. A dial that started before the move and still lands on the old
// host moves it back; with one primary at a time that cannot happen.
func (p *Pool) noteHost(host string) {
	if prev := p.lastHost.Swap(&host); prev != nil && *prev != host {
		p.Reset()
	}
}

// isReadOnlyErr: SQLSTATE 25006, read_only_sql_transaction.
func isReadOnlyErr(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "25006"
}
