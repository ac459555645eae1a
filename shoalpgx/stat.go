package shoalpgx

import (
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
)

// Stat is a snapshot of a Pool's statistics with the methods of
// pgxpool.Stat, so that code reading pgxpool's numbers works unchanged.
// Pool.Stats gives shoal's own, fuller snapshot.
type Stat struct {
	s                         shoal.Stats
	idleDestroys, ageDestroys int64
}

// destroyCounts counts the closes pgxpool.Stat reports by cause.
type destroyCounts struct {
	idle, lifetime atomic.Int64
}

// count records one close of the core's with its reason.
func (d *destroyCounts) count(r shoal.Reason) {
	switch r {
	case shoal.ReasonIdle:
		d.idle.Add(1)
	case shoal.ReasonLifetime:
		d.lifetime.Add(1)
	}
}

// Stat returns a snapshot of the pool's statistics in pgxpool's shape.
func (p *Pool) Stat() *Stat {
	return &Stat{s: p.core.Stats(), idleDestroys: p.destroys.idle.Load(), ageDestroys: p.destroys.lifetime.Load()}
}

// AcquireCount is the number of successful acquires.
func (s *Stat) AcquireCount() int64 { return s.s.Acquires }

// AcquireDuration is the total time successful acquires waited. An acquire
// that found an idle connection counts as no time at all, where pgxpool
// adds its few microseconds.
func (s *Stat) AcquireDuration() time.Duration { return s.s.WaitTime }

// AcquiredConns is the number of connections held now.
func (s *Stat) AcquiredConns() int32 { return int32(s.s.InUseConns) }

// CanceledAcquireCount is the number of acquires whose context ended while
// they waited.
func (s *Stat) CanceledAcquireCount() int64 { return s.s.CanceledAcquires }

// ConstructingConns is the number of connections being dialled now.
func (s *Stat) ConstructingConns() int32 { return int32(s.s.Dialing) }

// EmptyAcquireCount is the number of successful acquires that had to wait
// because no connection was idle.
func (s *Stat) EmptyAcquireCount() int64 { return s.s.WaitedAcquires }

// EmptyAcquireWaitTime is the total time those acquires waited.
func (s *Stat) EmptyAcquireWaitTime() time.Duration { return s.s.WaitTime }

// IdleConns is the number of idle connections.
func (s *Stat) IdleConns() int32 { return int32(s.s.IdleConns) }

// MaxConns is the pool's MaxConns.
func (s *Stat) MaxConns() int32 { return int32(s.s.MaxConns) }

// MaxIdleDestroyCount is the number of connections closed for MaxConnIdleTime.
func (s *Stat) MaxIdleDestroyCount() int64 { return s.idleDestroys }

// MaxLifetimeDestroyCount is the number of connections closed for
// MaxConnLifetime.
func (s *Stat) MaxLifetimeDestroyCount() int64 { return s.ageDestroys }

// NewConnsCount is the number of connections opened.
func (s *Stat) NewConnsCount() int64 { return s.s.Dials - s.s.DialErrors }

// TotalConns is the number of connections open or being dialled, as
// pgxpool counts them (Stats.TotalConns leaves out the dials).
func (s *Stat) TotalConns() int32 { return int32(s.s.TotalConns + s.s.Dialing) }
