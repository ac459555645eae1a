package shoal

import (
	"log/slog"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shoalpool/shoal/internal/namemask"
)

// normalized returns c with the convention every setting follows applied:
// a negative value, which means off, becomes the zero the pool's code reads
// as off, and MaxConns 0 becomes its default. The fields whose zero means a
// default other than off (MaxDialing, Partitions, QueueInterval,
// HealthCheckAfter) keep their zero, which features.go resolves.
func (c Config[T]) normalized() Config[T] {
	if c.MaxConns == 0 {
		c.MaxConns = defaultMaxConns()
	}
	c.MinIdle = max(c.MinIdle, 0)
	c.MinConns = max(c.MinConns, 0)
	c.MaxWaiters = max(c.MaxWaiters, 0)
	c.BusyStreams = max(c.BusyStreams, 0)
	c.BargeWindow = max(c.BargeWindow, 0)
	c.QueueTarget = max(c.QueueTarget, 0)
	c.MaxLifetime = max(c.MaxLifetime, 0)
	c.LifetimeJitter = max(c.LifetimeJitter, 0)
	if c.MaxLifetime == 0 {
		c.LifetimeJitter = 0
	}
	c.MaxIdleTime = max(c.MaxIdleTime, 0)
	c.HealthCheckPeriod = max(c.HealthCheckPeriod, 0)
	c.DialTimeout = max(c.DialTimeout, 0)
	c.LeakThreshold = max(c.LeakThreshold, 0)
	return c
}

// defaultMaxConns is MaxConns's default, pgxpool's: enough for a small
// machine's cores to keep busy, and never fewer than four.
func defaultMaxConns() int { return max(4, runtime.NumCPU()) }

// named returns c with its Name and Logger settled: an empty Name made up
// (defaultName), a password in it masked where it stands (namemask), a nil
// Logger slog.Default(), and the logger carrying the name on every line.
func (c Config[T]) named() Config[T] {
	if c.Name == "" {
		c.Name = defaultName[T]()
	}
	c.Name = namemask.Mask(c.Name)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Logger = c.Logger.With(slog.String("pool", c.Name))
	return c
}

// poolsMade counts the pools made without a Name, per connection type, for
// the names made up for them.
var poolsMade sync.Map // type name -> *atomic.Int64

// defaultName makes up a pool's name from its connection type and how many
// pools of that type were made without a name so far: "net.Conn-1",
// "shoalhttp.h1conn-2". It is stable for a program that makes its pools in
// the same order, and says what the pool holds.
func defaultName[T any]() string {
	typ := strings.TrimLeft(reflect.TypeFor[T]().String(), "*")
	if typ == "" {
		typ = "pool"
	}
	v, _ := poolsMade.LoadOrStore(typ, new(atomic.Int64))
	return typ + "-" + strconv.FormatInt(v.(*atomic.Int64).Add(1), 10)
}
