package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// dialsHosts reports whether the pool dials host by host itself
// (connectHosts) rather than leaving the hosts to pgx: with several hosts,
// with a target_session_attrs other than any, and in the read pool. The
// pool then knows which host each connection is on and what role it had.
func (p *Pool) dialsHosts(cc *pgx.ConnConfig) bool {
	return severalHosts(cc) || (p.target != targetAny && p.target != targetCustom)
}

// hostStagger is how long a dial to a writable host among several waits
// for a host before it tries the next one too. A healthy server answers a
// connect (TCP, startup, SCRAM, the read-write check) in a few
// milliseconds on a LAN and well under this across a WAN; one that
// accepts and never answers (a crashed machine, a partition) would
// otherwise hold the dial for HostConnectTimeout before pgx tried the next
// host.
const hostStagger = 250 * time.Millisecond

// dialed is one connection a dial opened, with where it is: its host, the
// host's epoch before its role was read (a retire after that retires the
// connection too), and, when judged, the role it was judged on.
type dialed struct {
	conn   *pgx.Conn
	host   *hostState
	epoch  uint64
	role   role
	judged bool
}

// connectHosts connects to a host of cc that qualifies for the pool's
// target: in the string's order, or shuffled for load_balance_hosts=random,
// each host given hostStagger before the next is tried as well (at once
// when one fails), so that a host that never answers holds a dial up by a
// quarter of a second and not by its connect timeout. The first connection
// to qualify wins. When none qualifies and the target falls back
// (prefer-standby, the read pool), the hosts that could serve as the
// fallback are tried again, accepting them, as libpq does. The error says
// what each host answered.
func (p *Pool) connectHosts(ctx context.Context, cc *pgx.ConnConfig) (dialed, error) {
	cfgs := hostConfigs(cc)
	if p.loadBalance {
		rand.Shuffle(len(cfgs), func(i, j int) { cfgs[i], cfgs[j] = cfgs[j], cfgs[i] })
	}
	p.unlikelyLast(cfgs)
	d, fallbacks, err := p.connectFirst(ctx, cfgs, false)
	if err == nil || len(fallbacks) == 0 || ctx.Err() != nil {
		return d, err
	}
	d, _, err2 := p.connectFirst(ctx, fallbacks, true)
	if err2 != nil {
		return d, errors.Join(err, err2)
	}
	return d, nil
}

// unlikelyLast moves to the end, keeping their order, the hosts that did
// not qualify when last looked at or whose last dial failed (a silent
// host passed over for another counts: connectFirst): after a
// failover the old primary, refusing or now a standby, costs a dial to the
// new one nothing, and the read pool does not connect to the primary each
// time before it reaches a standby. Their turn still comes, in the same
// dial, when the others fail.
func (p *Pool) unlikelyLast(cfgs []*pgx.ConnConfig) {
	if len(cfgs) < 2 {
		return
	}
	unlikely := func(c *pgx.ConnConfig) bool {
		h := p.hosts.get(hostAddr(c))
		r, seen, failed := h.lastLook()
		return failed || (seen && p.target.judge(r, p.maxLag) != nil)
	}
	slices.SortStableFunc(cfgs, func(a, b *pgx.ConnConfig) int {
		ua, ub := unlikely(a), unlikely(b)
		switch {
		case ua == ub:
			return 0
		case ua:
			return 1
		}
		return -1
	})
}

// connectFirst is one round of connectHosts over cfgs. It returns the
// winner, or every host's error and the configs of the hosts that answered
// as a fallback would (errFallback). With fallback set such hosts qualify.
func (p *Pool) connectFirst(ctx context.Context, cfgs []*pgx.ConnConfig, fallback bool) (dialed, []*pgx.ConnConfig, error) {
	type result struct {
		d   dialed
		i   int // the index in cfgs
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan result, len(cfgs))
	started, pending := 0, 0
	// startedAt and ended say, for each attempt, when it started and
	// whether it has ended, for passedOver; failedBefore, whether its
	// host's last dial had failed when it started, for takeFallback.
	startedAt, ended := make([]time.Time, len(cfgs)), make([]bool, len(cfgs))
	failedBefore := make([]bool, len(cfgs))
	startNext := func() {
		i, c := started, cfgs[started]
		startedAt[i] = time.Now()
		_, _, failedBefore[i] = p.hosts.get(hostAddr(c)).lastLook()
		started++
		pending++
		go func() {
			d, err := p.connectOneRecovered(ctx, c, fallback)
			results <- result{d, i, err}
		}()
	}
	// closeLate closes the connections of the attempts still under way
	// once they end: cancelled by the deferred cancel, or connected all the
	// same.
	closeLate := func(left int) {
		p.cleanups.Add(1)
		go func() {
			defer p.cleanups.Done()
			for range left {
				if late := <-results; late.d.conn != nil {
					late.d.host.open.Add(-1)
					closeCtx, cancel := context.WithTimeout(context.Background(), closeTimeout)
					_ = late.d.conn.Close(closeCtx)
					cancel()
				}
			}
		}()
	}
	stagger := p.stagger
	if stagger <= 0 {
		stagger = hostStagger
	}
	// passedOver records, as its host's LastError, each attempt still under
	// way when the dial goes on without it (another host won, or one that
	// answered as a fallback is to be taken) after it had had its stagger:
	// a silent host failed the dial as surely as one that refused, and
	// goes last in the next (unlikelyLast), before the winner is handed
	// out. One started less than a stagger before says nothing of its
	// host. It returns their errors, for the dial's.
	passedOver := func(when string) []error {
		var out []error
		for i := range started {
			if waited := time.Since(startedAt[i]); !ended[i] && waited >= stagger {
				err := fmt.Errorf("no answer within %s, when %s", waited.Round(time.Millisecond), when)
				p.hosts.get(hostAddr(cfgs[i])).noteErr(err)
				out = append(out, fmt.Errorf("%s: %w", hostAddr(cfgs[i]), err))
			}
		}
		return out
	}
	// staggered is set once every host was started and the last one has
	// had its stagger. From then a round that has a fallback (a primary,
	// for prefer-standby or the read pool) ends without waiting on the
	// hosts still silent if each of them had failed its last dial too (a
	// standby gone silent, which timed out once): every dial would
	// otherwise wait out its HostConnectTimeout before it took the
	// primary. A host with no failure known is waited for, as it may only
	// be slow to connect, and a standby that is would never be used.
	var errs []error
	var fallbacks []*pgx.ConnConfig
	staggered := false
	takeFallback := func() bool {
		if fallback || !staggered || pending == 0 || len(fallbacks) == 0 {
			return false
		}
		for i := range started {
			if !ended[i] && !failedBefore[i] {
				return false
			}
		}
		return true
	}
	startNext()
	timer := time.NewTimer(stagger)
	defer timer.Stop()
	for {
		select {
		case r := <-results:
			pending--
			ended[r.i] = true
			if r.err == nil {
				passedOver("another host answered")
				closeLate(pending)
				return r.d, nil, nil
			}
			if errors.Is(r.err, errFallback) {
				fallbacks = append(fallbacks, cfgs[r.i])
			}
			errs = append(errs, scrubConnectError(r.err))
			if fatalForAllHosts(r.err) {
				closeLate(pending)
				return dialed{}, nil, errors.Join(errs...)
			}
			if started < len(cfgs) {
				startNext()
				timer.Reset(stagger)
			} else if pending == 0 {
				return dialed{}, fallbacks, errors.Join(errs...)
			}
		case <-timer.C:
			if started < len(cfgs) {
				startNext()
				timer.Reset(stagger)
			} else {
				staggered = true
			}
		}
		if takeFallback() {
			errs = append(errs, passedOver("a fallback host answered")...)
			closeLate(pending)
			return dialed{}, fallbacks, errors.Join(errs...)
		}
	}
}

// fatalForAllHosts reports the errors after which pgx tries no other host:
// a wrong password, a database that does not exist, no right to connect.
func fatalForAllHosts(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "28P01" || pe.Code == "3D000" || pe.Code == "42501")
}

// connectOneRecovered is connectOne, in a goroutine of its own, with a
// panic in one of pgx's hooks under it (DialFunc, ValidateConnect, a
// tracer's, ...) made its error: the core, which recovers a dial's panic,
// does not see this goroutine.
func (p *Pool) connectOneRecovered(ctx context.Context, c *pgx.ConnConfig, fallback bool) (d dialed, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = dialed{}, fmt.Errorf("shoalpgx: a connect hook panicked dialling %s: %v", hostAddr(c), r)
		}
	}()
	return p.connectOne(ctx, c, fallback)
}

// connectOne connects to the one host of c and checks it as pgconn's
// target_session_attrs check would, with roleQuery in its place (one round
// trip either way), so that the pool learns the host's role and lag too.
// A ValidateConnect of the caller's own still runs, first. The connection
// counts in its host's Open from here.
func (p *Pool) connectOne(ctx context.Context, c *pgx.ConnConfig, fallback bool) (dialed, error) {
	dialCtx := ctx
	if t := p.hostConnectTimeout(); t > 0 {
		// pgx applies its connect timeout to each address of a host
		// name, and a host whose addresses are all silent would hold
		// the dial for that many times HostConnectTimeout.
		var cancel context.CancelFunc
		dialCtx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	host := p.hosts.get(hostAddr(c))
	epoch := host.epoch.Load()
	var r role
	own := c.ValidateConnect
	if p.target != targetCustom {
		own = nil // pgx's check for target_session_attrs, which roleQuery replaces
	}
	c.ValidateConnect = func(ctx context.Context, pg *pgconn.PgConn) error {
		if own != nil {
			if err := own(ctx, pg); err != nil {
				return err
			}
		}
		var err error
		if r, err = p.readRole(ctx, pg); err != nil {
			return err
		}
		host.noteRole(r, time.Now())
		err = p.target.judge(r, p.maxLag)
		if fallback && errors.Is(err, errFallback) {
			return nil
		}
		return err
	}
	conn, err := pgx.ConnectConfig(dialCtx, c)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, errFallback) {
			host.noteErr(scrubConnectError(err))
		}
		return dialed{}, err
	}
	host.open.Add(1)
	return dialed{conn: conn, host: host, epoch: epoch, role: r, judged: true}, nil
}
