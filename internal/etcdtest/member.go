package etcdtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Member is one etcd process of a Cluster. Its methods fail the test on
// error, so call them from the test's goroutine.
type Member struct {
	// Name is the member's etcd name: m0, m1, ...
	Name string
	// Endpoint is the member's client address, 127.0.0.1:port.
	Endpoint string

	t            testing.TB
	bin          string
	args         []string
	logPath      string
	startTimeout time.Duration

	mu      sync.Mutex
	proc    *os.Process
	done    chan struct{} // closed once proc has exited and been reaped
	stopped bool
}

// waitExit bounds how long a killed member may take to be reaped.
const waitExit = 10 * time.Second

// start runs the member's process. Stdout and stderr go to its log file.
func (m *Member) start() error {
	log, err := os.OpenFile(m.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("etcdtest: %s log: %w", m.Name, err)
	}
	cmd := exec.Command(m.bin, m.args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return fmt.Errorf("etcdtest: starting %s: %w", m.Name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait() // a killed member's error is expected
		_ = log.Close()
		close(done)
	}()
	m.mu.Lock()
	m.proc, m.done, m.stopped = cmd.Process, done, false
	m.mu.Unlock()
	return nil
}

// kill sends SIGKILL (which ends a stopped process too) and waits until the
// process is reaped. A member that is not running is left alone.
func (m *Member) kill() error {
	m.mu.Lock()
	proc, done := m.proc, m.done
	m.mu.Unlock()
	if proc == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	if err := proc.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("etcdtest: killing %s (pid %d): %w", m.Name, proc.Pid, err)
	}
	select {
	case <-done:
		return nil
	case <-time.After(waitExit):
		return fmt.Errorf("etcdtest: %s (pid %d) still running %v after SIGKILL", m.Name, proc.Pid, waitExit)
	}
}

// signal sends s to the running process.
func (m *Member) signal(s os.Signal, what string) {
	m.t.Helper()
	if s == nil {
		m.t.Fatalf("etcdtest: cannot %s %s on this system", what, m.Name)
	}
	m.mu.Lock()
	proc, done := m.proc, m.done
	m.mu.Unlock()
	if proc == nil || isClosed(done) {
		m.t.Fatalf("etcdtest: cannot %s %s: it is not running", what, m.Name)
	}
	if err := proc.Signal(s); err != nil {
		m.t.Fatalf("etcdtest: %s %s (pid %d): %v", what, m.Name, proc.Pid, err)
	}
}

// Stop pauses the member with SIGSTOP: it keeps its sockets open and
// answers nothing, as a process stalled by GC, a full disk or a VM
// migration would.
func (m *Member) Stop() {
	m.t.Helper()
	m.signal(sigStop, "stop")
	waitStopped(m.PID())
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
}

// Cont resumes a member paused by Stop (SIGCONT).
func (m *Member) Cont() {
	m.t.Helper()
	m.signal(sigCont, "continue")
	m.mu.Lock()
	m.stopped = false
	m.mu.Unlock()
}

// Kill ends the member with SIGKILL and waits until it has exited. Its
// data stays, for Restart.
func (m *Member) Kill() {
	m.t.Helper()
	if err := m.kill(); err != nil {
		m.t.Fatal(err)
	}
}

// Restart kills the member if it runs, starts it again on the same ports
// and data, and waits until it answers healthy, which for a member of a
// cluster means it has a leader again: restart enough members for a quorum
// before expecting that.
func (m *Member) Restart() {
	m.t.Helper()
	if err := m.kill(); err != nil {
		m.t.Fatal(err)
	}
	if err := m.start(); err != nil {
		m.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.startTimeout)
	defer cancel()
	if err := m.waitHealthy(ctx); err != nil {
		m.t.Fatal(err)
	}
}

// Running reports whether the member's process is alive (stopped or not).
func (m *Member) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.proc != nil && !isClosed(m.done)
}

// Stopped reports whether the member is paused by Stop.
func (m *Member) Stopped() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stopped && m.proc != nil && !isClosed(m.done)
}

// PID is the process id of the member's latest start, 0 before any.
func (m *Member) PID() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc == nil {
		return 0
	}
	return m.proc.Pid
}

// errExited says a member's process ended before it answered.
var errExited = errors.New("exited before it answered")

// errPortTaken says a member could not bind one of its ports: another
// process took it after freePorts let it go.
var errPortTaken = errors.New("a port was taken")

// waitHealthy polls the member's /health until it reports healthy, the
// process exits, or ctx ends; every 50ms, so the loop is bounded by ctx.
func (m *Member) waitHealthy(ctx context.Context) error {
	client := &http.Client{Timeout: time.Second}
	url := "http://" + m.Endpoint + "/health"
	m.mu.Lock()
	done := m.done
	m.mu.Unlock()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = healthy(ctx, client, url); last == nil {
			return nil
		}
		select {
		case <-done:
			tail := m.logTail(20)
			if strings.Contains(tail, "address already in use") {
				return fmt.Errorf("etcdtest: %s %w: %w\n%s", m.Name, errExited, errPortTaken, tail)
			}
			return fmt.Errorf("etcdtest: %s %w; its log ends:\n%s", m.Name, errExited, tail)
		case <-ctx.Done():
			return fmt.Errorf("etcdtest: %s not healthy at %s: %w (last: %v); its log ends:\n%s",
				m.Name, url, ctx.Err(), last, m.logTail(20))
		case <-tick.C:
		}
	}
}

// healthy asks etcd's /health once.
func healthy(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body.String(), `"health":"true"`) {
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(body.String()))
	}
	return nil
}

// logTail returns the last n lines of the member's log.
func (m *Member) logTail(n int) string {
	b, err := os.ReadFile(m.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func isClosed(c chan struct{}) bool {
	if c == nil {
		return false
	}
	select {
	case <-c:
		return true
	default:
		return false
	}
}
