package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Options say what Start starts. The zero Options start one member.
type Options struct {
	// Members is the cluster's size; 0 means 1.
	Members int
	// StartTimeout bounds the wait for every member to answer healthy,
	// at start and in Member.Restart; 0 means 30s (a 2-core machine busy
	// compiling has been seen to take several seconds).
	StartTimeout time.Duration
	// Binary is the etcd binary; empty means $SHOAL_ETCD_BIN, else etcd on
	// PATH.
	Binary string
}

// Cluster is a running etcd cluster of one or more members on loopback.
type Cluster struct {
	// Members are the cluster's members, in the order of Endpoints.
	Members []*Member

	t       testing.TB
	started []*Member // every member of every attempt, for the cleanup
}

// startAttempts bounds the retries when a port freePorts found is taken
// before etcd binds it.
const startAttempts = 3

// StartSingle starts a one-member etcd and waits until it answers.
func StartSingle(t testing.TB) *Cluster {
	t.Helper()
	return Start(t, Options{Members: 1})
}

// StartCluster starts an n-member etcd cluster and waits until every
// member answers healthy (has a leader).
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	return Start(t, Options{Members: n})
}

// Start starts the cluster opts describe, on free loopback ports with data
// under t.TempDir(), and waits until every member answers healthy. Every
// process it starts is killed and reaped in t.Cleanup, also when Start
// itself fails the test.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	n := opts.Members
	if n == 0 {
		n = 1
	}
	if n < 0 {
		t.Fatalf("etcdtest: Options.Members must be >= 0, got %d", n)
	}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	bin := binary(t, opts.Binary)
	dir := t.TempDir()
	c := &Cluster{t: t}
	// Registered after TempDir, so it runs before the directory goes.
	t.Cleanup(c.cleanup)
	for attempt := 1; ; attempt++ {
		err := c.launch(bin, filepath.Join(dir, fmt.Sprint("try", attempt)), n, timeout)
		if err == nil {
			return c
		}
		for _, m := range c.Members {
			if kerr := m.kill(); kerr != nil {
				t.Error(kerr)
			}
		}
		if attempt < startAttempts && errors.Is(err, errPortTaken) {
			t.Logf("etcdtest: retrying on other ports: %v", err)
			continue
		}
		t.Fatal(err)
	}
}

// launch starts n members under dir and waits for all of them.
func (c *Cluster) launch(bin, dir string, n int, timeout time.Duration) error {
	ports, err := freePorts(2 * n)
	if err != nil {
		return err
	}
	// A token of the directory's own: a member can never join another
	// test's cluster that happens to reuse a port.
	token := fmt.Sprintf("etcdtest-%d", time.Now().UnixNano())
	var peers []string
	for i := range n {
		peers = append(peers, fmt.Sprintf("m%d=http://127.0.0.1:%d", i, ports[n+i]))
	}
	c.Members = make([]*Member, n)
	for i := range n {
		name := "m" + strconv.Itoa(i)
		client := "http://127.0.0.1:" + strconv.Itoa(ports[i])
		peer := "http://127.0.0.1:" + strconv.Itoa(ports[n+i])
		m := &Member{
			Name:         name,
			Endpoint:     "127.0.0.1:" + strconv.Itoa(ports[i]),
			t:            c.t,
			bin:          bin,
			logPath:      filepath.Join(dir, name+".log"),
			startTimeout: timeout,
			args: []string{
				"--name", name,
				"--data-dir", filepath.Join(dir, name),
				"--listen-client-urls", client,
				"--advertise-client-urls", client,
				"--listen-peer-urls", peer,
				"--initial-advertise-peer-urls", peer,
				"--initial-cluster", strings.Join(peers, ","),
				"--initial-cluster-token", token,
				"--initial-cluster-state", "new",
				"--logger", "zap", "--log-outputs", "stderr", "--log-level", "warn",
			},
		}
		c.Members[i] = m
	}
	// Only the test's user may read it, as etcd wants for its data.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("etcdtest: %w", err)
	}
	// Every member must run before any can be healthy: a member alone has
	// no quorum and so no leader.
	for _, m := range c.Members {
		if err := m.start(); err != nil {
			return err
		}
		c.started = append(c.started, m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for _, m := range c.Members {
		if err := m.waitHealthy(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Endpoints returns the members' client addresses (127.0.0.1:port).
func (c *Cluster) Endpoints() []string {
	eps := make([]string, len(c.Members))
	for i, m := range c.Members {
		eps[i] = m.Endpoint
	}
	return eps
}

// Member returns member i, failing the test when there is none.
func (c *Cluster) Member(i int) *Member {
	c.t.Helper()
	if i < 0 || i >= len(c.Members) {
		c.t.Fatalf("etcdtest: no member %d in a cluster of %d", i, len(c.Members))
	}
	return c.Members[i]
}

// cleanup kills every member ever started and, when the test failed,
// logs the end of each member's log.
func (c *Cluster) cleanup() {
	for _, m := range c.started {
		if err := m.kill(); err != nil {
			c.t.Error(err)
		}
	}
	if c.t.Failed() {
		for _, m := range c.Members {
			c.t.Logf("etcdtest: %s (%s) log ends:\n%s", m.Name, m.Endpoint, m.logTail(20))
		}
	}
}
