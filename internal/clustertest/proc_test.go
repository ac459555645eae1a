//go:build unix

package clustertest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// spec is what one worker is started with; see ./worker's flags.
type spec struct {
	etcd     []string
	postgres string
	name     string // the budget's
	prefix   string
	size     int
	min      int
	ttl      time.Duration // 0: shoaletcd's default
	idle     time.Duration // 0: shoaletcd's default
	maxConns int
	app      string
	load     int
	logDir   string // where its stderr goes; empty: a t.TempDir()
}

// proc is one running worker.
type proc struct {
	t       *testing.T
	label   string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	logPath string
	started time.Time
	done    chan struct{} // closed once the process is reaped

	mu        sync.Mutex
	reports   []Report  // every line so far, oldest first
	stopped   bool      // by SIGSTOP
	signalled time.Time // when it was last stopped or resumed
}

// exitWait bounds how long a worker may take to exit once asked.
const exitWait = 10 * time.Second

// start starts a worker from s, labelled label in logs. It is killed
// (SIGKILL, which ends a stopped process too) and reaped when the test
// ends, whatever happened to it before.
func start(t *testing.T, label string, s spec) *proc {
	t.Helper()
	args := []string{
		"-etcd", strings.Join(s.etcd, ","),
		"-postgres", s.postgres,
		"-name", s.name,
		"-prefix", s.prefix,
		"-label", label,
		"-size", strconv.Itoa(s.size),
		"-min", strconv.Itoa(s.min),
		"-ttl", s.ttl.String(),
		"-idle", s.idle.String(),
		"-max-conns", strconv.Itoa(s.maxConns),
		"-app", s.app,
		"-load", strconv.Itoa(s.load),
	}
	if s.logDir == "" {
		s.logDir = t.TempDir()
	}
	p := &proc{t: t, label: label, done: make(chan struct{}),
		logPath: filepath.Join(s.logDir, label+".log")}
	logFile, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(workerBinary(t), args...)
	p.cmd.Stderr = logFile
	p.cmd.SysProcAttr = childAttr()
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		_ = logFile.Close()
		t.Fatalf("starting worker %s: %v", label, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var r Report
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				continue // not a report: the worker says why on stderr
			}
			p.mu.Lock()
			p.reports = append(p.reports, r)
			p.mu.Unlock()
		}
		_ = p.cmd.Wait() // after stdout is drained
		_ = logFile.Close()
		close(p.done)
	}()
	t.Cleanup(p.kill)
	return p
}

// logged reports whether the worker's stderr has s in it so far.
func (p *proc) logged(s string) bool {
	b, _ := os.ReadFile(p.logPath)
	return strings.Contains(string(b), s)
}

// logTail logs the end of the worker's stderr and its last report.
func (p *proc) logTail(lines int) {
	b, _ := os.ReadFile(p.logPath)
	p.t.Logf("worker %s (pid %d) stderr ends:\n%s\nlast report: %+v", p.label, p.cmd.Process.Pid, tail(string(b), lines), p.last())
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// exited reports whether the worker's process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL and waits until the process is reaped. A worker that
// has exited is left alone.
func (p *proc) kill() {
	if p.exited() {
		return
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		p.t.Errorf("killing worker %s: %v", p.label, err)
	}
	select {
	case <-p.done:
	case <-time.After(exitWait):
		p.t.Errorf("worker %s (pid %d) still runs %v after SIGKILL", p.label, p.cmd.Process.Pid, exitWait)
	}
}

// send writes one command line to the worker.
func (p *proc) send(format string, args ...any) {
	p.t.Helper()
	if _, err := fmt.Fprintf(p.stdin, format+"\n", args...); err != nil {
		p.t.Fatalf("worker %s: %v", p.label, err)
	}
}

// setLoad runs n goroutines of queries in the worker.
func (p *proc) setLoad(n int) { p.t.Helper(); p.send("load %d", n) }

// leave closes the worker's stdin, so it closes its pool and its budget
// (revoking its lease) and exits, and waits for that.
func (p *proc) leave() {
	p.t.Helper()
	_ = p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(exitWait):
		p.t.Fatalf("worker %s did not exit within %v of its stdin closing", p.label, exitWait)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		p.t.Fatalf("worker %s exited with %d", p.label, code)
	}
}

// signal sends sig to the worker.
func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("worker %s: %v: %v", p.label, sig, err)
	}
	p.mu.Lock()
	switch sig {
	case syscall.SIGSTOP:
		p.stopped, p.signalled = true, time.Now()
	case syscall.SIGCONT:
		p.stopped, p.signalled = false, time.Now()
	}
	p.mu.Unlock()
}

// last returns the latest report, or a zero Report before any.
func (p *proc) last() Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.reports) == 0 {
		return Report{}
	}
	return p.reports[len(p.reports)-1]
}

// since returns the reports written at or after t.
func (p *proc) since(t time.Time) []Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	ms := t.UnixMilli()
	var out []Report
	for _, r := range p.reports {
		if r.At >= ms {
			out = append(out, r)
		}
	}
	return out
}
