package shoal

import (
	"runtime"
	"time"
)

// features is what a Config turns on, derived once in New: the acquire and
// release paths ask these, not the Config, whether a feature that combines
// settings is on. Every rule that derives one is here (deriveFeatures), so
// that what makes the fast path fast is decided, and tested, in one place.
// Where one setting alone decides (a hook set, a timeout above zero), and
// in set-up and maintenance, the code reads the Config.
type features struct {
	// plain: exclusive connections with nothing to do on the way in or out
	// (no check, hook, clock, lifetime, observer, leak tracking or
	// shedding): Acquire and Release take their shortest paths.
	plain bool
	// quickTake: exclusive connections with no check on the way out, so a
	// popped connection is the caller's as it is.
	quickTake bool
	// tracking: every acquire is recorded (load shedding's waits, the
	// observer, the acquiring stack for leak reports).
	tracking bool
	// trackHeld: leases record when they were handed out (observer,
	// leak reports).
	trackHeld bool
	// nameTaker: each lease records the frames as far as the code that took
	// it, for Holders and the exhaustion message (a tracing Observer, a
	// WaitTracer, without LeakThreshold, which keeps the whole stack).
	nameTaker bool
	// checkOnTake: a check runs on a connection before it is handed out
	// (lifetime, health, BeforeAcquire).
	checkOnTake bool
	// ctxChecks: one of those checks uses the caller's context
	// (HealthCheck, BeforeAcquire).
	ctxChecks bool
	// clockOnIdle: releases record when a connection went idle
	// (MaxIdleTime, HealthCheck).
	clockOnIdle bool

	multiplexed bool
	maxStreams  int   // leases one connection serves at once: 1 in exclusive mode
	busyStreams int   // leases at which a connection counts as busy (BusyStreams): maxStreams unless set
	partitions  int   // idle stacks: 1 in multiplexed mode
	maxDialing  int32 // dials in flight at once
	healthAfter int64 // idleness (ns) after which HealthCheck runs; 0 without one
}

// deriveFeatures turns a validated Config into the features it turns on.
// gomaxprocs is runtime.GOMAXPROCS(0), a parameter so that the rules can be
// tested on any machine.
func deriveFeatures[T any](cfg *Config[T], gomaxprocs int) features {
	f := features{
		maxStreams:  max(cfg.MaxStreams, 1),
		maxDialing:  int32(cfg.MaxDialing),
		clockOnIdle: cfg.MaxIdleTime > 0 || cfg.HealthCheck != nil,
		checkOnTake: cfg.MaxLifetime > 0 || cfg.HealthCheck != nil || cfg.Hooks.BeforeAcquire != nil,
		ctxChecks:   cfg.HealthCheck != nil || cfg.Hooks.BeforeAcquire != nil,
		trackHeld:   cfg.Observer != nil || cfg.LeakThreshold > 0,
	}
	_, tracing := tracerOf(cfg.Observer)
	f.nameTaker = tracing && cfg.LeakThreshold <= 0
	f.multiplexed = f.maxStreams > 1
	f.busyStreams = f.maxStreams
	if cfg.BusyStreams > 0 && cfg.BusyStreams < f.maxStreams {
		f.busyStreams = cfg.BusyStreams
	}
	if f.maxDialing == 0 {
		// Not bounded by MaxConns as New sees it: every dial holds a
		// place under the limit (cap.reserve), which bounds it by MaxConns
		// as SetMaxConns leaves it.
		f.maxDialing = defaultMaxDialing
	}
	if cfg.HealthCheck != nil {
		f.healthAfter = int64(cfg.HealthCheckAfter)
		if f.healthAfter == 0 {
			f.healthAfter = int64(defaultHealthCheckAfter)
		}
	}
	f.tracking = f.trackHeld || cfg.QueueTarget > 0
	f.quickTake = !f.multiplexed && !f.checkOnTake
	f.plain = f.quickTake && !f.tracking && !f.clockOnIdle &&
		cfg.MaxLifetime == 0 && cfg.Hooks.AfterRelease == nil
	f.partitions = cfg.Partitions
	if f.partitions == 0 {
		f.partitions = min(gomaxprocs, cfg.MaxConns, maxDefaultPartitions)
	}
	if f.multiplexed {
		f.partitions = 1
	}
	return f
}

// featuresOf is deriveFeatures on this machine.
func featuresOf[T any](cfg *Config[T]) features {
	return deriveFeatures(cfg, runtime.GOMAXPROCS(0))
}

// Defaults for fields whose zero value means "choose for me".
const (
	defaultHealthCheckAfter = time.Second
	defaultQueueInterval    = time.Second
	defaultMaxDialing       = 4
	maxDefaultPartitions    = 16
)
