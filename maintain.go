package shoal

import "time"

// Maintenance timing. The tick is frequent enough to honour the shortest
// configured duration to within half of it, and never busier than every
// minTick.
const (
	maxTick = time.Second
	minTick = time.Millisecond
)

// maintain is the pool's one background goroutine. It closes connections
// that have been idle too long or lived too long, checks idle ones every
// HealthCheckPeriod, keeps MinIdle and MinConns connections open, drives
// load shedding, and retries dials for waiters once a dial backoff has
// passed. It wakes on its timer or when kicked.
func (p *Pool[T]) maintain() {
	defer close(p.life.maintDone)
	timer := time.NewTimer(p.nextTick())
	defer timer.Stop()
	lastIdleCheck := p.now()
	for {
		select {
		case <-p.life.quit:
			return
		case <-p.life.kick:
		case <-timer.C:
		}
		p.life.passes.Add(1)
		now := p.now()
		p.reap(now)
		if p.shed != nil {
			p.shedTick(now)
		}
		p.scanLeaks(now)
		if p.cfg.HealthCheckPeriod > 0 && now-lastIdleCheck >= int64(p.cfg.HealthCheckPeriod) {
			lastIdleCheck = now
			p.eng.checkIdle(now)
		}
		if p.hot.over.Load() {
			p.eng.shrink() // a shrink's last closes, if releases missed them
		}
		p.refill()
		p.maybeDial()
		timer.Reset(p.nextTick())
	}
}

// nextTick says how long maintenance may sleep.
func (p *Pool[T]) nextTick() time.Duration {
	tick := maxTick
	if d := p.cfg.MaxIdleTime; d > 0 {
		tick = min(tick, d/2)
	}
	if d := p.cfg.MaxLifetime; d > 0 {
		// The shortest lifetime is MaxLifetime (jitter only adds).
		tick = min(tick, d/2)
	}
	if d := p.cfg.LeakThreshold; d > 0 {
		tick = min(tick, d/2)
	}
	if d := p.cfg.HealthCheckPeriod; d > 0 {
		tick = min(tick, d/2)
	}
	if p.shed != nil {
		tick = min(tick, time.Duration(p.shed.interval)/2)
		if p.shed.shedding.Load() {
			tick = min(tick, time.Duration(p.shed.target)/2)
		}
	}
	// Backing off after a failed dial while someone needs a connection:
	// wake when the backoff ends.
	if p.hot.waiters.Load() > p.cap.dialing.Load() || p.keepsFloor() {
		if wait := time.Duration(p.dial.backoffUntil.Load() - p.now()); wait > 0 {
			tick = min(tick, wait)
		}
	}
	return max(tick, minTick)
}

// keepsFloor reports whether maintenance keeps connections open by itself
// (MinIdle or MinConns).
func (p *Pool[T]) keepsFloor() bool { return p.cfg.MinIdle > 0 || p.cfg.MinConns > 0 }

// warmTarget is how many connections Warm opens: the larger floor.
func (p *Pool[T]) warmTarget() int {
	return min(max(p.cfg.MinIdle, p.cfg.MinConns), int(p.cap.limit.Load()))
}

// refill starts dials until MinConns connections are open or being
// dialled and MinIdle are idle or being dialled, not counting those being
// closed.
func (p *Pool[T]) refill() {
	if !p.keepsFloor() || p.hot.closed.Load() {
		return
	}
	short := func() bool {
		// open counts dials in flight, and closes still running, which
		// hold their place in MaxConns but serve nobody.
		if p.cap.serving() < p.cfg.MinConns {
			return true
		}
		// Idle or on the way to idle: counted from open, which holds a
		// dialled connection throughout, where the dials in flight and
		// the idle stacks each miss it for a moment as it lands.
		return p.cfg.MinIdle > 0 && p.cap.serving()-p.inUse() < p.cfg.MinIdle
	}
	for p.startDialIf(short) {
	}
}

// idleCount counts open connections with no lease.
func (p *Pool[T]) idleCount() int {
	_, _, idle := p.eng.count()
	return idle
}

// reap closes idle connections past MaxIdleTime (keeping MinIdle idle and
// MinConns open) or past their lifetime; refill replaces them as needed.
func (p *Pool[T]) reap(now int64) {
	if p.cfg.MaxIdleTime == 0 && p.cfg.MaxLifetime == 0 {
		return
	}
	p.eng.reap(now)
}
