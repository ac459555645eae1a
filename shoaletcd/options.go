package shoaletcd

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"
)

// DefaultPrefix is where budgets live in etcd unless Options.Prefix says
// otherwise.
const DefaultPrefix = "/shoal/budget/"

// Options configures one member of a budget. Every member of a budget must
// agree on Name, Size and Prefix; Min, TTL, IdleTime and Label are the
// member's own.
type Options struct {
	// Name names the budget; required. Its keys live under Prefix+Name+"/".
	Name string
	// Size is how many connections the whole budget may hold (N); required,
	// > 0. The first member writes it to etcd, and New fails for a member
	// whose Size differs while others are alive.
	Size int
	// Min is this member's minimum share, >= 0. It is granted first, even
	// when the member is idle, and it is what the member runs on while etcd
	// is unreachable at start. The minimums of all members must fit in Size.
	Min int
	// TTL is the etcd lease behind every key this member writes; default 5s,
	// at least 2s (etcd counts leases in whole seconds). A member killed
	// without closing frees its share within TTL, plus up to the half
	// second etcd takes to notice an expired lease.
	TTL time.Duration
	// IdleTime is how long demand must stay below a level before the share
	// above it is given back; default 2s. It keeps shares from following
	// every short dip in demand.
	IdleTime time.Duration
	// Prefix is the key prefix of all budgets; default DefaultPrefix. It
	// should end in "/".
	Prefix string
	// Label is shown to others (and by Read) beside the host name and pid,
	// e.g. a deployment or pod name; optional.
	Label string
	// Logger receives what the budget reports (etcd lost and found again,
	// slots re-taken); default slog.Default().
	Logger *slog.Logger
}

// Errors that New returns, wrapped with the values that were wrong.
var (
	// ErrSizeMismatch: the budget in etcd has another Size than this member.
	ErrSizeMismatch = errors.New("shoaletcd: budget size differs")
	// ErrMinimums: the members' minimums, this one's included, exceed Size.
	ErrMinimums = errors.New("shoaletcd: sum of minimums exceeds the budget size")
	// ErrJoined: Join on a Budget that serves a pool already (or did).
	// Each pool needs a Budget of its own; Budgets made with the same
	// Name share one limit.
	ErrJoined = errors.New("shoaletcd: budget joined twice")
	// ErrClosed: Acquire on a closed budget.
	ErrClosed = errors.New("shoaletcd: budget closed")
)

// withDefaults checks o and fills in the defaults, naming the wrong field.
func (o Options) withDefaults() (Options, error) {
	if o.Name == "" {
		return o, errors.New("shoaletcd: Options.Name is required")
	}
	if strings.Contains(o.Name, "/") {
		return o, fmt.Errorf("shoaletcd: Options.Name %q contains '/'", o.Name)
	}
	if o.Size <= 0 {
		return o, fmt.Errorf("shoaletcd: Options.Size is %d; it must be > 0", o.Size)
	}
	if o.Min < 0 || o.Min > o.Size {
		return o, fmt.Errorf("shoaletcd: Options.Min is %d; it must be in [0, Size=%d]", o.Min, o.Size)
	}
	if o.TTL == 0 {
		o.TTL = 5 * time.Second
	}
	if o.TTL < 2*time.Second {
		return o, fmt.Errorf("shoaletcd: Options.TTL is %v; it must be at least 2s", o.TTL)
	}
	if o.IdleTime == 0 {
		o.IdleTime = 2 * time.Second
	}
	if o.IdleTime < 0 {
		return o, fmt.Errorf("shoaletcd: Options.IdleTime is %v; it must be >= 0", o.IdleTime)
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}

// opTimeout bounds one etcd request, so that an unreachable etcd is noticed
// well within a lease and no caller waits on it for long.
func (o Options) opTimeout() time.Duration {
	return min(max(o.TTL/2, 500*time.Millisecond), 3*time.Second)
}

// ttlSeconds is the lease TTL as etcd takes it, rounded up.
func (o Options) ttlSeconds() int64 {
	return int64((o.TTL + time.Second - 1) / time.Second)
}

// hostName is this machine's name as shown to other members, or "unknown".
func hostName() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return h
}
