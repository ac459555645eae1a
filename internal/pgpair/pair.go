package pgpair

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// script creates, repairs and drives the pair's clusters; scripts/services.sh
// runs the same file.
//
//go:embed pair.sh
var script string

// Bounds on the commands: a rebuild copies the primary (a few seconds on
// an idle loopback pair) and waits for the new standby to stream; the rest
// are one pg_ctl each.
const (
	rebuildTimeout = 2 * time.Minute
	commandTimeout = time.Minute
)

// StopMode is how a server is stopped (pg_ctl's -m).
type StopMode string

const (
	// Fast ends the sessions, rolling back their transactions, and shuts
	// down cleanly: a planned stop.
	Fast StopMode = "fast"
	// Immediate stops at once, without a shutdown checkpoint: a crash, as
	// far as the server's files are concerned.
	Immediate StopMode = "immediate"
)

// Pair is the primary/standby pair. Primary and Standby are the roles the
// servers have when the pair is healthy; after Promote the standby is the
// primary until Rebuild.
type Pair struct {
	Primary Node // the primary while the pair is healthy
	Standby Node // the synchronous standby while the pair is healthy
	// HA is the multi-host connection string of both, primary first.
	HA string
}

// Load reads the pair's addresses from the environment (EnvPrimary,
// EnvStandby, EnvHA) and checks that this process can control its servers.
func Load() (*Pair, error) {
	primary, err := nodeFromEnv(EnvPrimary)
	if err != nil {
		return nil, err
	}
	standby, err := nodeFromEnv(EnvStandby)
	if err != nil {
		return nil, err
	}
	ha := os.Getenv(EnvHA)
	if ha == "" {
		return nil, fmt.Errorf("pgpair: %s is not set (scripts/test-env.sh sets it)", EnvHA)
	}
	if _, err := ReplaceHost(ha, primary.Addr, primary.Addr); err != nil {
		return nil, fmt.Errorf("pgpair: %s does not name the primary %s", EnvHA, primary.Addr)
	}
	if _, err := ReplaceHost(ha, standby.Addr, standby.Addr); err != nil {
		return nil, fmt.Errorf("pgpair: %s does not name the standby %s", EnvHA, standby.Addr)
	}
	if err := canControl(); err != nil {
		return nil, err
	}
	return &Pair{Primary: primary, Standby: standby, HA: ha}, nil
}

// canControl reports why this process cannot run pg_ctlcluster as the
// servers' owner, or nil.
func canControl() error {
	if _, err := exec.LookPath("pg_ctlcluster"); err != nil {
		return fmt.Errorf("pgpair: no pg_ctlcluster on PATH (Debian's postgresql-common): %v", err)
	}
	if os.Geteuid() == 0 {
		return nil
	}
	if u, err := user.Current(); err == nil && u.Username == "postgres" {
		return nil
	}
	return errors.New("pgpair: controlling the pair's servers takes root or the postgres user")
}

// run runs pair.sh with args, bounded by ctx and limit, and returns an error
// that ends with the script's output when it fails.
func (p *Pair) run(ctx context.Context, limit time.Duration, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{"-c", script, "pair.sh"}, args...)...)
	cmd.Env = append(os.Environ(),
		"SHOAL_PAIR_PRIMARY_PORT="+p.Primary.Port,
		"SHOAL_PAIR_STANDBY_PORT="+p.Standby.Port,
		fmt.Sprintf("SHOAL_PAIR_WAIT=%d", int(limit/time.Second)),
	)
	ownGroup(cmd)
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("%w after %v", ctx.Err(), limit)
	}
	return fmt.Errorf("pgpair: pair.sh %s: %v: %s", strings.Join(args, " "), err, tail(out.String(), 2000))
}

// tail returns the last n bytes of s, trimmed.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}

// Promote promotes the standby n and returns once it accepts writes.
func (p *Pair) Promote(ctx context.Context, n Node) error {
	return p.run(ctx, commandTimeout, "promote", n.Port)
}

// Stop stops the server n (it may already be stopped).
func (p *Pair) Stop(ctx context.Context, n Node, mode StopMode) error {
	return p.run(ctx, commandTimeout, "stop", n.Port, string(mode))
}

// Start starts the server n (it may already run) and returns once it
// accepts connections.
func (p *Pair) Start(ctx context.Context, n Node) error {
	return p.run(ctx, commandTimeout, "start", n.Port)
}

// Rejoin brings the server n, an old primary, back as a standby of the
// other server, which a test has promoted: n is stopped, rewound onto the
// new primary's timeline (pg_rewind, which drops what n wrote after the
// two diverged) and started as its streaming standby; Rejoin returns once
// it streams. Rebuild makes Primary the primary again.
func (p *Pair) Rejoin(ctx context.Context, n Node) error {
	return p.run(ctx, rebuildTimeout, "rejoin", n.Port)
}

// SetReadOnly turns default_transaction_read_only on or off for every
// session of the server n, the open ones too from their next statement: a
// primary fenced (writes refused with SQLSTATE 25006) while its clients
// stay connected, as a cluster manager demoting it would. Rebuild turns it
// off again.
func (p *Pair) SetReadOnly(ctx context.Context, n Node, on bool) error {
	v := "off"
	if on {
		v = "on"
	}
	return p.run(ctx, commandTimeout, "readonly", n.Port, v)
}

// PauseReplay pauses WAL replay on the standby n, or resumes it: paused,
// it goes on receiving WAL (synchronous commits on the primary still
// return) and falls behind in what its sessions see. A rebuild resumes it.
func (p *Pair) PauseReplay(ctx context.Context, n Node, pause bool) error {
	v := "resume"
	if pause {
		v = "pause"
	}
	return p.run(ctx, commandTimeout, "replay", n.Port, v)
}

// Healthy returns nil when Primary is a running primary with Standby
// streaming from it synchronously, else what is wrong.
func (p *Pair) Healthy(ctx context.Context) error {
	return p.run(ctx, commandTimeout, "status")
}

// Rebuild makes the pair healthy again whatever a test did to it: Primary
// runs and is out of recovery, and Standby is a fresh copy of it
// (pg_basebackup -R) streaming synchronously. What was written on a
// promoted Standby is gone.
func (p *Pair) Rebuild(ctx context.Context) error {
	return p.run(ctx, rebuildTimeout, "rebuild")
}

// Restore rebuilds the pair only when it is not healthy: after a test that
// silenced a server through a Proxy, say, nothing needs doing.
func (p *Pair) Restore(ctx context.Context) error {
	if p.Healthy(ctx) == nil {
		return nil
	}
	return p.Rebuild(ctx)
}

// InRecovery asks the server n whether it is a standby
// (pg_is_in_recovery), on a connection of its own bounded by ctx.
func InRecovery(ctx context.Context, n Node) (bool, error) {
	c, err := pgx.Connect(ctx, n.ConnString)
	if err != nil {
		return false, fmt.Errorf("pgpair: connect to %s: %w", n.Addr, err)
	}
	defer c.Close(context.Background())
	var r bool
	if err := c.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&r); err != nil {
		return false, fmt.Errorf("pgpair: ask %s whether it is in recovery: %w", n.Addr, err)
	}
	return r, nil
}
