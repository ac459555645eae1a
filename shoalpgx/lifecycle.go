package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/peek"
)

// coreConfig translates the pool's Config into the core's, checking the
// settings the core does not know about.
func (p *Pool) coreConfig() (shoal.Config[*pooledConn], error) {
	c := p.config
	// The settings the core does not see as they are: the core checks the
	// rest (Config.Validate, below) and its error is renamed to ours.
	checks := []struct {
		bad       bool
		key, what string
		got       any
	}{
		// pgxpool's meanings: a Config is pgxpool's, so MaxConns 0 and a
		// negative floor or barge window are errors here, not the core's
		// default and off. Each message says what 0 would have meant, the
		// way to the default or to off.
		{c.MaxConns < 1, "MaxConns", "must be > 0", c.MaxConns},
		{c.MinConns < 0, "MinConns", "must be >= 0 (0 means none kept)", c.MinConns},
		{c.MinIdleConns < 0, "MinIdleConns", "must be >= 0 (0 means none kept)", c.MinIdleConns},
		{c.MaxWaiters < 0, "MaxWaiters", "must be >= 0 (0 means no limit)", c.MaxWaiters},
		{c.BargeWindow < 0, "BargeWindow", "must be >= 0 (0 means strict first-come, first-served)", c.BargeWindow},
		{c.Partitions < 0, "Partitions", "must be >= 0 (0 lets the core choose)", c.Partitions},
		{c.MaxConnLifetime < 0, "MaxConnLifetime", "must be >= 0 (0 means no limit)", c.MaxConnLifetime},
		{c.MaxConnLifetimeJitter < 0, "MaxConnLifetimeJitter", "must be >= 0 (0 means none)", c.MaxConnLifetimeJitter},
		{c.MaxConnIdleTime < 0, "MaxConnIdleTime", "must be >= 0 (0 means no limit)", c.MaxConnIdleTime},
		{c.HealthCheckAfter < 0, "HealthCheckAfter", "must be >= 0 (0 turns the checks off)", c.HealthCheckAfter},
		{c.PingTimeout < 0, "PingTimeout", "must be >= 0 (0 means no bound of its own)", c.PingTimeout},
		{c.CancelTimeout < 0, "CancelTimeout", "must be >= 0 (0 closes the connection at once)", c.CancelTimeout},
		{c.HealthCheckPeriod < 0, "HealthCheckPeriod", "must be >= 0 (0 turns it off)", c.HealthCheckPeriod},
		{c.HostConnectTimeout < 0, "HostConnectTimeout", "must be >= 0 (0 leaves dials to the connect timeout)", c.HostConnectTimeout},
		{c.RoleCheckPeriod < 0, "RoleCheckPeriod", "must be >= 0 (0 turns it off)", c.RoleCheckPeriod},
		{c.MaxStandbyLag < 0, "MaxStandbyLag", "must be >= 0 (0 means no bound)", c.MaxStandbyLag},
		{c.ReadMaxConns < 0, "ReadMaxConns", "must be >= 0 (0 means the pool's MaxConns)", c.ReadMaxConns},
		{c.LeakThreshold < 0, "LeakThreshold", "must be >= 0 (0 turns leak detection off)", c.LeakThreshold},
		{c.LoadBalanceHosts != "" && c.LoadBalanceHosts != LoadBalanceDisable && c.LoadBalanceHosts != LoadBalanceRandom,
			"LoadBalanceHosts", `must be "", "disable" or "random"`, fmt.Sprintf("%q", c.LoadBalanceHosts)},
	}
	for _, ch := range checks {
		if ch.bad {
			return shoal.Config[*pooledConn]{}, &ConfigError{Key: ch.key, Reason: fmt.Sprintf("%s, got %v", ch.what, ch.got)}
		}
	}
	if err := checkPipeline(c); err != nil {
		return shoal.Config[*pooledConn]{}, err
	}
	budget := c.Budget
	if c.Pipeline > 0 {
		// The whole and the shared connections divide MaxConns
		// (pipeline_pool.go).
		div, err := newDivision(c)
		if err != nil {
			return shoal.Config[*pooledConn]{}, err
		}
		p.division, budget = div, div
	}

	closer := p.closeOrLeave
	if p.waitsForHangUp() {
		closer = closeAndWait
	}
	cfg := shoal.Config[*pooledConn]{
		Name:        c.Name,
		Dial:        p.dialMarked,
		Close:       closer,
		MaxConns:    int(c.MaxConns),
		MinIdle:     int(c.MinIdleConns),
		MinConns:    int(c.MinConns),
		Partitions:  c.Partitions,
		MaxWaiters:  c.MaxWaiters,
		MaxIdleTime: c.MaxConnIdleTime,
		MaxDialing:  c.MaxDialing,
		BargeWindow: c.BargeWindow,
		Logger:      c.Logger,

		Observer:      p.wholeCoreObserver(),
		LeakThreshold: c.LeakThreshold,
		Budget:        budget,
	}
	// pgxpool's lifetime is MaxConnLifetime plus up to the jitter, and so
	// is the core's.
	if c.MaxConnLifetime > 0 {
		cfg.MaxLifetime = c.MaxConnLifetime
		cfg.LifetimeJitter = c.MaxConnLifetimeJitter
	}
	if c.HealthCheckAfter > 0 {
		// The core calls the check after the shorter idleness; it looks
		// at the socket, and the acquire pings after HealthCheckAfter
		// (health.go, acquire.go). The same look runs in the background.
		p.lookAfter = min(peekAfter, c.HealthCheckAfter)
		cfg.HealthCheck = p.healthCheck
		cfg.HealthCheckAfter = p.lookAfter
		cfg.HealthCheckPeriod = c.HealthCheckPeriod
	}
	if c.ShouldPing != nil {
		// ShouldPing is told every idle connection's idleness, which only
		// the check hears: the core calls it after any idleness at all.
		cfg.HealthCheck = p.healthCheck
		cfg.HealthCheckAfter = time.Nanosecond
	}
	// PrepareConn (or BeforeAcquire) runs in the pool's own acquire, after
	// the ping, not in the core's (acquire.go).
	if c.AfterRelease != nil {
		hook := c.AfterRelease
		cfg.Hooks.AfterRelease = func(pc *pooledConn) bool {
			if pc.unused {
				// Given back by the pool's acquire: no caller used it
				// (pgxpool does not run AfterRelease there either).
				pc.unused = false
				return true
			}
			return hook(pc.conn)
		}
	}
	hook := c.BeforeClose
	cfg.Hooks.OnDisconnect = func(pc *pooledConn, r shoal.Reason) {
		pc.forget()
		if hook != nil {
			p.callBeforeClose(hook, pc.conn)
		}
	}
	if err := cfg.Validate(); err != nil {
		var ce *shoal.ConfigError
		if errors.As(err, &ce) {
			return shoal.Config[*pooledConn]{}, &ConfigError{Key: pgxField(ce.Field), Reason: ce.Reason}
		}
		return shoal.Config[*pooledConn]{}, err
	}
	return cfg, nil
}

// waitsForHangUp reports whether the pool's connections hold a budget's
// permits (the user's, or the division of MaxConns with Pipeline), whose
// closes therefore wait for the server to end the backend (closeAndWait).
func (p *Pool) waitsForHangUp() bool {
	return p.config.Budget != nil || p.config.Pipeline > 0
}

// pgxField names the Config field that sets a core Config field.
func pgxField(core string) string {
	switch core {
	case "MinIdle":
		return "MinIdleConns"
	case "MaxIdleTime":
		return "MaxConnIdleTime"
	case "MaxLifetime":
		return "MaxConnLifetime"
	case "LifetimeJitter":
		return "MaxConnLifetimeJitter"
	}
	return core // MaxConns, MinConns, Partitions, MaxWaiters, MaxDialing, ...
}

// dial opens one connection: BeforeConnect on a copy of the ConnConfig,
// connect, AfterConnect. The core runs it in the background under a context
// that ends with the pool. Errors lose the pgconn.Config that pgx attaches
// to them, since it holds the password.
func (p *Pool) dial(ctx context.Context) (*pooledConn, error) {
	c := p.config
	cc := p.timedConnConfig()
	permit := shoal.PermitFromContext(ctx)
	key, fenced := p.fenceKey()
	fenced = fenced && permit != nil
	if fenced && p.slotLockedElsewhere(ctx, permit, key) {
		refuseSlot(permit)
		return nil, slotFencedErr(key, permit.Slot())
	}
	if err := p.beforeConnect(ctx, cc); err != nil {
		return nil, err
	}
	if p.target == targetReads {
		readOnlySession(cc) // after BeforeConnect, which may have replaced the parameters
	}
	gateConnConfig(cc, c.CancelTimeout, p.waitsForHangUp()) // likewise: a statement cut short is cancelled (cancel.go)
	var d dialed
	var err error
	if p.dialsHosts(cc) {
		d, err = p.connectHosts(ctx, cc)
		if err == nil && p.target.writable() {
			p.noteHost(d.host.addr)
		}
	} else {
		host := p.hosts.get(hostAddr(cc))
		epoch := host.epoch.Load()
		d.conn, err = pgx.ConnectConfig(ctx, cc)
		if err == nil {
			d.host, d.epoch = host, epoch
			d.host.open.Add(1)
		}
	}
	if err != nil {
		return nil, scrubConnectError(err)
	}
	conn := d.conn
	// closeNew closes the new connection when what follows the connect
	// refuses it.
	closeNew := func() {
		d.host.open.Add(-1)
		_ = closeWaiting(conn)
	}
	if fenced {
		if err := takeFence(ctx, conn, key, permit.Slot()); err != nil {
			closeNew()
			if errors.Is(err, ErrSlotFenced) {
				refuseSlot(permit)
			}
			return nil, err
		}
	}
	if c.AfterConnect != nil {
		if err := p.afterConnect(ctx, conn); err != nil {
			closeNew()
			return nil, err
		}
	}
	pc := &pooledConn{conn: conn, pool: p, resetGen: p.resets.Load(), host: d.host, hostEpoch: d.epoch, role: d.role, judged: d.judged}
	if g := findGate(conn.PgConn().Conn()); g != nil {
		pc.cancel = g.c
	}
	if fenced {
		pc.fence = &fenceLock{key: key, slot: permit.Slot()}
	}
	pc.setFallback(d.judged && p.isFallback(d.role))
	pc.initPeek()
	return pc, nil
}

// timedConnConfig is a copy of the pool's ConnConfig with its connect
// timeout set: the default one when the string sets none, and with several
// hosts HostConnectTimeout, since pgconn applies the timeout to each host
// in turn.
func (p *Pool) timedConnConfig() *pgx.ConnConfig {
	cc := p.config.ConnConfig.Copy()
	if cc.ConnectTimeout <= 0 {
		cc.ConnectTimeout = defaultConnectTimeout
		if t := p.hostConnectTimeout(); t > 0 {
			cc.ConnectTimeout = t
		}
	}
	return cc
}

// hostConnectTimeout is the bound on each host of a dial across several
// hosts, all its addresses together, or 0: HostConnectTimeout, when
// timedConnConfig puts it in place of a connect_timeout the string does
// not set.
func (p *Pool) hostConnectTimeout() time.Duration {
	if p.config.ConnConfig.ConnectTimeout > 0 || !severalHosts(p.config.ConnConfig) {
		return 0
	}
	return p.config.HostConnectTimeout
}

// beforeConnect runs the BeforeConnect hook, if any, on cc.
func (p *Pool) beforeConnect(ctx context.Context, cc *pgx.ConnConfig) error {
	if hook := p.config.BeforeConnect; hook != nil {
		if err := callBeforeConnect(ctx, hook, cc); err != nil {
			return scrubConnectError(err)
		}
	}
	return nil
}

// connConfig is what a connection outside the pool's dials (the fallback
// probe) connects with: timedConnConfig after BeforeConnect.
func (p *Pool) connConfig(ctx context.Context) (*pgx.ConnConfig, error) {
	cc := p.timedConnConfig()
	return cc, p.beforeConnect(ctx, cc)
}

// afterConnect runs the AfterConnect hook on a new connection under ctx
// bounded by the connect timeout (afterConnectTimeout): the dial runs
// under the pool's context, which ends only with Close, so a hook that
// hangs (on a lock, on a server gone silent) would otherwise keep its
// place under MaxConns, and a pool of one connection would serve nobody,
// until Close. Its error names the hook; the core's error around it names
// the pool, as for any failed dial.
func (p *Pool) afterConnect(ctx context.Context, conn *pgx.Conn) error {
	timeout := p.afterConnectTimeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := callAfterConnect(ctx, p.config.AfterConnect, conn)
	if err == nil {
		return nil
	}
	if _, ok := err.(*hookPanic); ok {
		return err // it names the hook already
	}
	err = scrubConnectError(err)
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("AfterConnect did not return within the connect timeout (%s): %w", timeout, err)
	}
	return fmt.Errorf("AfterConnect: %w", err)
}

// afterConnectTimeout is how long AfterConnect may take: ConnectTimeout
// (connect_timeout) when set, else the default connect timeout. Not
// HostConnectTimeout, which is for finding a host that answers, and would
// cut short a hook that does real work (preparing statements, loading
// types).
func (p *Pool) afterConnectTimeout() time.Duration {
	if t := p.config.ConnConfig.ConnectTimeout; t > 0 {
		return t
	}
	return defaultConnectTimeout
}

// callAfterConnect runs the AfterConnect hook; if it panics, the dial
// fails with an error naming the hook, and closes the new connection as
// for any error of the hook (dial's closeNew), which also takes it out of
// its host's Open: closing it here too counted it out twice.
func callAfterConnect(ctx context.Context, hook func(context.Context, *pgx.Conn) error, conn *pgx.Conn) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &hookPanic{hook: "AfterConnect", value: r}
		}
	}()
	return hook(ctx, conn)
}

// cleanupHold bounds how long a connection that pgx closed itself keeps
// its place under MaxConns while pgx's cleanup (a cancel request, then
// Terminate and a read until the server hangs up) runs on, unless the
// server has answered since. A server that answers lets go within a few
// round trips, and the place is freed then, so that the server never
// counts more connections of the pool than MaxConns; a loaded one can take
// longer, and the place stays held while it shows it is there (answering),
// closeTimeout at most. A server that has said nothing within this is not
// answering at all (a crash, a partition, a failover): its close would take
// pgx's 15 seconds, and the place is wanted for a dial that can reach
// another host. With the pool's own cancel handler pgx closes a connection
// mid-statement only after the server left a cancel request unanswered for
// CancelTimeout, so such a server has been silent for that long already.
const cleanupHold = 500 * time.Millisecond

// closeOrLeave closes pc and waits, cleanupHold at most, for the server to
// end its backend: PostgreSQL's backend lingers for a moment after
// Terminate, still counted at the server, and a dial that took the place
// at once could meet it there, one above MaxConns. The pool's own close
// sends Terminate and reads until the server hangs up (closeAndWait); a
// connection pgx closed already (a statement's context ended and the
// server did not answer the cancel request in time, or the connection
// broke) is left to pgx's cleanup, which does the same in a goroutine of
// its own. Past cleanupHold the place is freed and the close goes on in
// the background, but for pgx's cleanup of a server that has answered
// since, which keeps the place, closeTimeout at most; Pool.Close still
// waits for a close in the background, closeTimeout at most. A
// budgeted pool keeps waiting (closeAndWait): its permit must not go back
// while the backend may still hold the slot.
func (p *Pool) closeOrLeave(pc *pooledConn) error {
	// limit bounds the wait in the background: 0 for closeAndWait, which
	// has bounds of its own, closeTimeout for pgx's cleanup, whose own is
	// longer.
	var done <-chan struct{}
	var err error
	limit := closeTimeout
	if pc.conn.IsClosed() {
		done = pc.conn.PgConn().CleanupDone()
	} else {
		closed := make(chan struct{})
		go func() {
			err = closeAndWait(pc)
			close(closed)
		}()
		done, limit = closed, 0
	}
	hold := time.NewTimer(cleanupHold)
	select {
	case <-done:
		hold.Stop()
		return err
	case <-hold.C:
	}
	if limit > 0 && pc.answering() {
		// A server that answers, slowly: its backend is still there.
		wait := time.NewTimer(limit - cleanupHold)
		defer wait.Stop()
		select {
		case <-done:
		case <-wait.C:
		}
		return nil
	}
	p.cleanups.Add(1)
	go func() {
		defer p.cleanups.Done()
		if limit == 0 {
			<-done
			return
		}
		t := time.NewTimer(limit - cleanupHold)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
		}
	}()
	return nil
}

// answering reports whether the server has sent anything since pgx closed
// pc after a failed read: bytes pgx's cleanup read, or bytes or the
// server's hang-up waiting on the socket for it.
func (pc *pooledConn) answering() bool {
	if g := findGate(pc.conn.PgConn().Conn()); g != nil && g.answered.Load() {
		return true
	}
	res, _ := pc.peek.Peek()
	return res == peek.Data || res == peek.Closed
}

// closePgx closes a connection with pgx's Close and waits for pgconn's
// cleanup, so that a closed pool leaves no goroutine behind.
func closePgx(conn *pgx.Conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	err := conn.Close(ctx)
	select {
	case <-conn.PgConn().CleanupDone():
	case <-ctx.Done():
	}
	return err
}
