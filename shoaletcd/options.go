package shoaletcd

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/shoalpool/shoal"
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
	// whose Size differs while others are alive. A member none of whose
	// pools is open has left the budget in etcd and does not count as
	// alive: the size may change meanwhile, and then its next pool is
	// refused (ErrSizeMismatch) rather than join with the old Size.
	Size int
	// Min is this member's minimum share; 0 (the default) or negative: none.
	// It is granted first, even when the member is idle, and it is what the
	// member runs on while etcd is unreachable at start. The minimums of
	// all members must fit in Size.
	Min int
	// TTL is the etcd lease behind every key this member writes; default 5s,
	// at least 2s (etcd counts leases in whole seconds); a negative value
	// is an error. A member killed
	// without closing frees its share within TTL, plus up to the half
	// second etcd takes to notice an expired lease.
	TTL time.Duration
	// IdleTime is how long demand must stay below a level before the share
	// above it is given back; default 2s. It keeps shares from following
	// every short dip in demand. A negative value means no wait: the share
	// follows demand down at once.
	IdleTime time.Duration
	// Prefix is the key prefix of all budgets; default DefaultPrefix. It
	// should end in "/".
	Prefix string
	// Label is shown to others (and by Read) beside the host name and pid,
	// e.g. a deployment or pod name; optional.
	Label string
	// Logger receives what the budget reports (etcd lost and found again,
	// slots re-taken); nil means slog.Default(), as everywhere in shoal:
	// slog.New(slog.DiscardHandler) silences it.
	Logger *slog.Logger
}

// Errors that New returns, wrapped with the values that were wrong.
var (
	// ErrSizeMismatch: the budget in etcd has another Size than this member.
	ErrSizeMismatch = errors.New("shoaletcd: budget size differs")
	// ErrMinimums: the members' minimums, this one's included, exceed Size.
	ErrMinimums = errors.New("shoaletcd: sum of minimums exceeds the budget size")
	// ErrJoined: Join of a pool that has joined the Budget already.
	ErrJoined = errors.New("shoaletcd: pool joined twice")
	// ErrClosed: Acquire on a closed budget.
	ErrClosed = errors.New("shoaletcd: budget closed")
)

// withDefaults checks o and fills in the defaults. Its errors are
// *shoal.ConfigError naming the field, as every part of shoal reports a
// setting that cannot work. Zero means the default; a negative Min or
// IdleTime means none, and a negative TTL, which has no "none", is an error.
func (o Options) withDefaults() (Options, error) {
	bad := func(field, reason string) error {
		return &shoal.ConfigError{Struct: "shoaletcd.Options", Field: field, Reason: reason}
	}
	switch {
	case o.Name == "":
		return o, bad("Name", "is required: it names the budget every member shares")
	case strings.Contains(o.Name, "/"):
		return o, bad("Name", fmt.Sprintf("must not contain '/', got %q", o.Name))
	case o.Size <= 0:
		return o, bad("Size", fmt.Sprintf("is required and must be > 0, got %d", o.Size))
	case o.Min > o.Size:
		return o, bad("Min", fmt.Sprintf("must be <= Size (%d), got %d", o.Size, o.Min))
	case o.TTL < 0:
		return o, bad("TTL", fmt.Sprintf("must be >= 0 (0 means %s), got %s", defaultTTL, o.TTL))
	case o.TTL > 0 && o.TTL < minTTL:
		return o, bad("TTL", fmt.Sprintf("must be at least %s (etcd counts leases in whole seconds), got %s", minTTL, o.TTL))
	}
	o.Min = max(o.Min, 0)
	if o.TTL == 0 {
		o.TTL = defaultTTL
	}
	switch {
	case o.IdleTime == 0:
		o.IdleTime = defaultIdleTime
	case o.IdleTime < 0:
		o.IdleTime = 0 // shares follow demand down at once
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}

// Defaults and bounds of Options.
const (
	defaultTTL      = 5 * time.Second
	minTTL          = 2 * time.Second
	defaultIdleTime = 2 * time.Second
)

// opTimeout bounds one etcd request, so that an unreachable etcd is noticed
// well within a lease and no caller waits on it for long. It needs no
// floor: withDefaults keeps TTL at minTTL or more.
func (o Options) opTimeout() time.Duration {
	return min(o.TTL/2, 3*time.Second)
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
