package shoal

import "context"

// The call* functions run user code (Dial, Close, hooks, checks) so that a
// panic in it becomes an error or a "no" instead of unwinding through the
// pool's bookkeeping: the counts stay right and the caller gets an error.

func (p *Pool[T]) callDial(ctx context.Context) (value T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{where: "Dial", value: r}
		}
	}()
	return p.cfg.Dial(ctx)
}

func (p *Pool[T]) callClose(c *conn[T]) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{where: "Close", value: r}
		}
	}()
	return p.cfg.Close(c.value)
}

func (p *Pool[T]) callOnConnect(ctx context.Context, value T) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{where: "Hooks.OnConnect", value: r}
		}
	}()
	return p.cfg.Hooks.OnConnect(ctx, value)
}

func (p *Pool[T]) callOnDisconnect(c *conn[T], reason Reason) {
	defer func() {
		if r := recover(); r != nil {
			p.logConnError("hook panicked", c, &panicError{where: "Hooks.OnDisconnect", value: r})
		}
	}()
	p.cfg.Hooks.OnDisconnect(c.value, reason)
}

func (p *Pool[T]) callBeforeAcquire(ctx context.Context, c *conn[T]) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			p.logConnError("hook panicked", c, &panicError{where: "Hooks.BeforeAcquire", value: r})
			ok = false
		}
	}()
	return p.cfg.Hooks.BeforeAcquire(ctx, c.value)
}

func (p *Pool[T]) callAfterRelease(c *conn[T]) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			p.logConnError("hook panicked", c, &panicError{where: "Hooks.AfterRelease", value: r})
			ok = false
		}
	}()
	return p.cfg.Hooks.AfterRelease(c.value)
}

func (p *Pool[T]) callHealthCheck(ctx context.Context, c *conn[T]) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{where: "HealthCheck", value: r}
		}
	}()
	return p.cfg.HealthCheck(ctx, c.value)
}

func (p *Pool[T]) callStreamLimit(c *conn[T]) (n int) {
	defer func() {
		if r := recover(); r != nil {
			p.logConnError("hook panicked", c, &panicError{where: "Hooks.StreamLimit", value: r})
			n = 0
		}
	}()
	return p.cfg.Hooks.StreamLimit(c.value)
}

// callBroken treats a panicking Broken as "broken": the safe side.
func (p *Pool[T]) callBroken(err error) (broken bool) {
	defer func() {
		if r := recover(); r != nil {
			broken = true
		}
	}()
	return p.cfg.Broken(err)
}

// callFill treats a panicking Fill as "no": the pool spreads the lease
// instead. Fill runs with the multiplexed engine's lock held, so a panic
// let through would leave the lock held and every later acquire stuck.
func (p *Pool[T]) callFill(value T, streams int) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			p.logConnError("hook panicked", nil, &panicError{where: "Config.Fill", value: r})
			ok = false
		}
	}()
	return p.cfg.Fill(value, streams)
}

// callAvoid treats a panicking Avoid as "not held up", for the same
// reason as callFill.
func (p *Pool[T]) callAvoid(value T) (avoid bool) {
	defer func() {
		if r := recover(); r != nil {
			p.logConnError("hook panicked", nil, &panicError{where: "Config.Avoid", value: r})
			avoid = false
		}
	}()
	return p.cfg.Avoid(value)
}
