package shoalpgx

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The pool's part in a failover. With several hosts in the connection
// string and target_session_attrs asking for a writable one, two signs say
// that the primary has moved: a dial that lands on another host than the
// one before it (noteHost), and a write refused with
// read_only_sql_transaction (SQLSTATE 25006) on a server that, asked
// after the refusal, says it refuses writes: the connection's host is no
// longer the primary (fenced or demoted with its sessions still open). On either the pool resets (Pool.Reset), so that its
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
//
// A refused write alone does not say that: the caller's own statements can
// make its transaction read-only (SET TRANSACTION READ ONLY in a Tx, a
// BEGIN READ ONLY sent through Exec), and a reset then would close every
// connection to a healthy primary. So the pool first asks the server
// whether it refuses writes itself (judgeRefusal): at once when the
// session is free, else once its holder gives it back (giveBack), after
// the transaction's rollback. Only this path, after a 25006, pays the
// round trip.
func (pc *pooledConn) noteErr(ctx context.Context, err error) {
	if err == nil || !pc.pool.resetOnReadOnly {
		return
	}
	if pc.resetGen == pc.pool.resets.Load() && isReadOnlyErr(err) {
		pc.refused = true
		if pc.sessionFree() {
			pc.judgeRefusal(ctx)
		}
	}
}

// refusalCheckTimeout bounds the look after a refused write, within the
// caller's context: one short query, which a server that just answered
// the write answers at once.
const refusalCheckTimeout = time.Second

// sessionFree reports whether pc's session can take the look now: open,
// not busy (a batch or rows still unread), and outside a transaction.
func (pc *pooledConn) sessionFree() bool {
	pg := pc.conn.PgConn()
	return !pc.conn.IsClosed() && !pg.IsBusy() && pg.TxStatus() == 'I'
}

// judgeRefusal asks pc's server, on pc's free session, whether it refuses
// writes itself (in recovery, or default_transaction_read_only on), after a
// write of pc's was refused with 25006, and resets the pool if it does.
// The look reads the server's default for the session (roleQuery), so
// neither a transaction nor a session the caller made read-only is taken
// for a fence. When ctx ended before the look was sent,
// pc.refused stays set and giveBack looks later; a look that failed
// otherwise (a server that refused a write and cannot answer a query in
// time) is taken at the refusal's word.
func (pc *pooledConn) judgeRefusal(ctx context.Context) {
	p := pc.pool
	if pc.resetGen != p.resets.Load() {
		pc.refused = false // the pool was reset since: nothing to judge
		return
	}
	ctx, cancel := context.WithTimeout(ctx, refusalCheckTimeout)
	r, err := readRole(ctx, pc.conn.PgConn())
	cancel()
	if err != nil && pc.sessionFree() && pgconn.SafeToRetry(err) {
		return // not sent: giveBack looks again on its own time
	}
	pc.refused = false
	if err == nil {
		pc.host.noteRole(r, time.Now())
	}
	if p.refusesWrites(r, err) && pc.resetGen == p.resets.Load() {
		p.Reset()
	}
}

// refusesWrites reports whether a look after a refused write (r, or err
// when it failed) says the host refuses writes, a fence's or a demotion's
// sign.
func (p *Pool) refusesWrites(r role, err error) bool {
	if err != nil {
		return true
	}
	if p.refusalRole != nil {
		r = p.refusalRole(r)
	}
	return r.inRecovery || r.readOnly
}

// judgeThenGiveBack ends giveBack for a connection with a refused write
// still to judge, off the caller's goroutine as a rollback is: it rolls
// back the transaction the refusal happened in, if any, looks
// (judgeRefusal), then gives pc back.
func (pc *pooledConn) judgeThenGiveBack() {
	ctx, cancel := context.WithTimeout(context.Background(), resetTimeout)
	defer cancel()
	if !pc.conn.IsClosed() && !pc.conn.PgConn().IsBusy() && pc.inTransaction() {
		_ = pc.conn.PgConn().Exec(ctx, "rollback").Close()
	}
	if pc.sessionFree() {
		pc.judgeRefusal(ctx)
	}
	pc.refused = false // judged, or past judging: a broken connection closes
	pc.giveBack()
}

// noteHost resets the pool when a staggered dial lands on another host
// than the one before it while the pool still has connections on another:
// with read-write or primary at most one host qualifies, so the primary
// has moved, and the pool's connections to the old one (fenced, demoted,
// or silent) would take callers' statements until each failed on its own.
// The new connection closes as it lands, as every one whose dial was
// under way at a Reset does (the core cannot tell which of those reached
// the old host), and the next dial, which finds the same host, takes its
// place. When the pool has no connection left elsewhere (a refused
// write's or the role check's Reset closed them, or the old server's end
// did) there is nothing to close, and a Reset would only cost the dials
// under way their connections to the new primary. A dial that started
// before the move and still lands on the old host moves it back; with one
// primary at a time that cannot happen.
func (p *Pool) noteHost(host string) {
	if prev := p.lastHost.Swap(&host); prev != nil && *prev != host && p.hosts.openElsewhere(host) {
		p.Reset()
	}
}

// isReadOnlyErr: SQLSTATE 25006, read_only_sql_transaction.
func isReadOnlyErr(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "25006"
}
