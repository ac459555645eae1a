package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/shoalpool/shoal"
)

// What the pool checks of a shared connection before a request goes on
// it, as admitHost (hosts_recheck.go) does of a whole one: a connection to
// a host retired since it was dialled (a failover, a read pool back from
// its fallback on a standby), or dialled before the pool's last Reset,
// takes no more requests and closes once those on it are answered; a read pool's session made writable likewise, and
// a connection quiet behind a statement given up on (pipeline_silent.go); and
// when the host was last looked at more than RoleCheckPeriod ago, one
// request's acquire asks the server again, by a role query pipelined like
// any other, and retires the host when it no longer qualifies (a standby
// promoted, or behind MaxStandbyLag).

// errPipeAdmit is a pipelined statement's error when every connection it
// was given in a row was refused.
var errPipeAdmit = errors.New("shoalpgx: a pipelined statement found no usable shared connection after MaxConns+1 tries: each was on a host retired or no longer qualifying, or had stopped answering")

// lagBelieved is how long a first reading past MaxStandbyLag stands for
// a second, taken at least lagRecheck later, to confirm it (see
// lagRecheck: one reading right after a write can be hours off).
const lagBelieved = time.Second

// admit reports whether the shared connection l holds may take a request.
// On false l has ended and the caller acquires again.
func (pp *pipePool) admit(ctx context.Context, l shoal.Lease[*pipeConn]) bool {
	c := l.Value()
	p := pp.p
	if c.quiet.Load() || c.pc.stale() != 0 || (p.target == targetReads && c.writable.Load()) {
		l.Retire()
		l.Release()
		return false
	}
	if !p.recheck {
		return true // no clock read: this runs for every statement
	}
	h := c.pc.host
	now := time.Now().UnixNano()
	if now-h.checkedAt.Load() < int64(p.config.RoleCheckPeriod) {
		return true
	}
	seen := c.lagSeenAt.Load()
	if seen != 0 && now-seen < int64(lagRecheck) {
		return true // the second reading is not due yet
	}
	if !h.checking.CompareAndSwap(false, true) {
		return true
	}
	defer h.checking.Store(false)
	r, err := pp.lookRole(ctx, l)
	if err != nil {
		return false // the next look, this connection's or another's, judges the host
	}
	if p.maxLag > 0 && r.inRecovery && r.lag > p.maxLag && (seen == 0 || now-seen > int64(lagBelieved)) {
		c.lagSeenAt.Store(time.Now().UnixNano())
		return false
	}
	c.lagSeenAt.Store(0)
	if p.target == targetReads {
		r.readOnly = r.inRecovery // as readRole: the session's own setting says nothing of the server
	}
	h.noteRole(r, time.Now())
	// Only one look at a host runs at once (h.checking): these are
	// written by one caller at a time.
	c.pc.role, c.pc.judged = r, true
	c.pc.setFallback(p.isFallback(r))
	if err := p.target.judge(r, p.maxLag); err != nil && !(p.target.fallsBack() && errors.Is(err, errFallback)) {
		h.retire()
	}
	return false
}

// lookRole runs roleQuery on l's connection as a pipelined request of its
// own, holding l's stream, which it ends.
func (pp *pipePool) lookRole(ctx context.Context, l shoal.Lease[*pipeConn]) (role, error) {
	ctx, cancel := context.WithTimeout(ctx, roleCheckTimeout)
	defer cancel()
	c := l.Value()
	r := newPipeReq(1)
	buf, err := (&pgproto3.Query{String: roleQuery}).Encode(r.buf)
	if err != nil {
		l.Release()
		return role{}, err
	}
	r.buf, r.lease = buf, l
	if err := c.send(ctx, nil, r); err != nil {
		l.Discard()
		return role{}, err
	}
	if err := pp.await(ctx, r); err != nil {
		return role{}, err
	}
	res := r.result(0)
	switch {
	case res.err != nil:
		return role{}, res.err
	case len(res.rows) != 1:
		return role{}, fmt.Errorf("shoalpgx: the role query returned %d rows", len(res.rows))
	}
	return parseRole(res.rows[0])
}

// errRefusalElsewhere is the look after a refused write when it ran on a
// shared connection to another host than the refusal's: it says nothing
// of that host.
var errRefusalElsewhere = errors.New("shoalpgx: the look after a refused write ran on another host")

// judgeRefusal is noteErr's look for a shared connection pc, whose session
// is never in a transaction but is never the caller's to query on either:
// it asks the server, by a role query pipelined like any other statement,
// on the shared connection the core picks (after a move all of the pool's
// current ones are on one host), whether it refuses writes, and resets the
// pool if it does (refusesWrites). A look on another host than pc's, or
// one that fails, takes the refusal at its word. A look cut short by the
// caller's context is done again in a goroutine, on its own time.
func (pp *pipePool) judgeRefusal(ctx context.Context, pc *pooledConn) {
	p := pp.p
	lctx, cancel := context.WithTimeout(ctx, refusalCheckTimeout)
	defer cancel()
	var on *pipeConn
	req := newPipeReq(1)
	err := pp.run(lctx, req, modeUnnamed, func(b *pipeBuild, buf []byte) ([]byte, error) {
		on = b.c
		buf = b.deallocations(buf)
		return (&pgproto3.Query{String: roleQuery}).Encode(buf)
	})
	if err != nil && ctx.Err() != nil {
		go pp.judgeRefusal(context.Background(), pc)
		return
	}
	var r role
	if err == nil {
		switch res := req.result(0); {
		case res.err != nil:
			err = res.err
		case len(res.rows) != 1:
			err = fmt.Errorf("shoalpgx: the role query returned %d rows", len(res.rows))
		case on.pc.host != pc.host:
			err = errRefusalElsewhere
		default:
			r, err = parseRole(res.rows[0])
		}
	}
	if err == nil {
		pc.host.noteRole(r, time.Now())
	}
	if p.refusesWrites(r, err) && pc.resetGen == p.resets.Load() {
		p.Reset()
	}
}
