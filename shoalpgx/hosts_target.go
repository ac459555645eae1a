package shoalpgx

import (
	"fmt"
	"reflect"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// target is what a server must be for a connection of the pool:
// target_session_attrs, as libpq defines its values, or the read pool's
// own rule (Pool.Reads).
type target int

const (
	targetAny target = iota
	targetReadWrite
	targetReadOnly
	targetPrimary
	targetStandby
	targetPreferStandby
	targetReads  // Reads: a standby within the lag bound, else the primary
	targetCustom // a ValidateConnect of the caller's own: pgx runs it
)

// targetOf names the target that validate, pgconn's check for a
// target_session_attrs value, stands for. Functions cannot be compared in
// Go; their code pointers can, and pgx's ParseConfig sets these exact ones.
func targetOf(validate pgconn.ValidateConnectFunc) target {
	if validate == nil {
		return targetAny
	}
	switch reflect.ValueOf(validate).Pointer() {
	case reflect.ValueOf(pgconn.ValidateConnectTargetSessionAttrsReadWrite).Pointer():
		return targetReadWrite
	case reflect.ValueOf(pgconn.ValidateConnectTargetSessionAttrsReadOnly).Pointer():
		return targetReadOnly
	case reflect.ValueOf(pgconn.ValidateConnectTargetSessionAttrsPrimary).Pointer():
		return targetPrimary
	case reflect.ValueOf(pgconn.ValidateConnectTargetSessionAttrsStandby).Pointer():
		return targetStandby
	case reflect.ValueOf(pgconn.ValidateConnectTargetSessionAttrsPreferStandby).Pointer():
		return targetPreferStandby
	}
	return targetCustom
}

// writable reports whether at most one host qualifies at a time (the
// primary), which is what lets a dial that lands elsewhere, or a refused
// write, say that the primary has moved (hosts_failover.go).
func (t target) writable() bool { return t == targetReadWrite || t == targetPrimary }

// fallsBack reports whether a host that does not qualify may still be used
// when none does: prefer-standby's primary, and the read pool's.
func (t target) fallsBack() bool { return t == targetPreferStandby || t == targetReads }

// checksRole reports whether the pool looks again at a host's role after
// its connections were opened (Config.RoleCheckPeriod): a writable pool
// on an idle connection (hosts_watch.go), the others at acquire
// (hosts_recheck.go).
func (t target) checksRole() bool { return t != targetAny && t != targetCustom }

// judge says whether a server with role r qualifies for t. It returns nil
// when it does, errFallback when it may be used only when no host
// qualifies, and otherwise the reason it does not, which a dial's error
// shows for its host. maxLag bounds a standby's lag for targetReads (0: no
// bound).
func (t target) judge(r role, maxLag time.Duration) error {
	switch t {
	case targetReadWrite:
		if r.readOnly {
			return errNotWritable(r)
		}
	case targetReadOnly:
		if !r.readOnly {
			return errHostWritable
		}
	case targetPrimary:
		if r.inRecovery {
			return errHostStandby
		}
	case targetStandby:
		if !r.inRecovery {
			return errHostNotStandby
		}
	case targetPreferStandby:
		if !r.inRecovery {
			return errFallback
		}
	case targetReads:
		if !r.inRecovery {
			return errFallback
		}
		if maxLag > 0 && r.lag > maxLag {
			return fmt.Errorf("standby is %s behind its primary, more than MaxStandbyLag (%s)", r.lag.Round(time.Millisecond), maxLag)
		}
	}
	return nil
}

// The reasons judge gives, as a dial's error shows them for each host.
var (
	errHostStandby    = fmt.Errorf("server is a standby (in recovery)")
	errHostNotStandby = fmt.Errorf("server is not a standby (not in recovery)")
	errHostWritable   = fmt.Errorf("server takes writes (transaction_read_only is off)")
	errFallback       = fmt.Errorf("server is the primary, used only when no standby qualifies")
)

// errNotWritable is read-write's reason for a server whose sessions refuse
// writes, which says why.
func errNotWritable(r role) error {
	if r.inRecovery {
		return errHostStandby
	}
	return fmt.Errorf("server refuses writes (transaction_read_only is on)")
}
