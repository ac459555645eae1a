package shoalpgx

import (
	"time"

	"github.com/shoalpool/shoal"
)

// Stat is a snapshot of a Pool's statistics with the methods of
// pgxpool.Stat, so that code reading pgxpool's numbers works unchanged.
// Shoal returns the same snapshot in shoal's own, fuller shape.
type Stat struct {
	s, pipelined              shoal.Stats
	idleDestroys, ageDestroys int64
}

// Stat returns a snapshot of the pool's statistics: pgxpool's methods,
// and Shoal for the rest (waiters, leaks, closes by any cause, the hosts).
// It counts this pool's connections only; the read pool (Reads) has its
// own Stat.
//
// With Config.Pipeline the figures are those of the whole connections and
// the shared ones added together, as one pool of MaxConns connections: a
// shared connection carrying at least one statement counts as acquired,
// one carrying none as idle, and each pipelined statement is one acquire
// (AcquireCount), its wait for a place on a connection the acquire's wait.
// Pipelined has the shared connections' figures apart.
func (p *Pool) Stat() *Stat {
	s := p.core.Stats()
	if severalHosts(p.config.ConnConfig) {
		s.Hosts = p.Hosts()
	}
	// The core counts why a connection went as it leaves, so a Stat
	// whose TotalConns no longer counts one counts its close, as
	// pgxpool's, which counts before it destroys.
	idle, age := s.ClosedFor(shoal.ReasonIdle), s.ClosedFor(shoal.ReasonLifetime)
	var ps shoal.Stats
	if p.pipe != nil {
		ps = p.pipe.core.Stats()
		idle += ps.ClosedFor(shoal.ReasonIdle)
		age += ps.ClosedFor(shoal.ReasonLifetime)
		s = sumStats(s, ps, int(p.config.MaxConns), p.config.Budget != nil)
	}
	return &Stat{s: s, pipelined: ps, idleDestroys: idle, ageDestroys: age}
}

// Pipelined returns the shared connections' own figures (Config.Pipeline),
// which the rest of the Stat includes: their pool is named Name +
// "/pipelined", its Leases are the statements in flight, and Leases /
// InUseConns is how many share a busy connection on average. Without
// Pipeline it is the zero Stats. For shoaldebug.Register:
//
//	func() shoal.Stats { return pool.Stat().Pipelined() }
func (s *Stat) Pipelined() shoal.Stats { return s.pipelined }

// Shoal returns the snapshot as the shoal core reports it, the figures
// pgxpool has no method for included, with Hosts set when the connection
// string names several hosts (see Pool.Hosts). For a function that
// returns it, as shoaldebug.Register takes:
//
//	func() shoal.Stats { return pool.Stat().Shoal() }
func (s *Stat) Shoal() shoal.Stats { return s.s }

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
