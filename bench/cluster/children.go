package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// child is one running worker process.
type child struct {
	index int
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // the worker's stdout, line by line; closed at EOF
	done  chan error  // the process's exit, once
}

// startChild starts a worker process running spec: this same binary, told
// by $SHOAL_BENCH_CLUSTER_WORKER to be a worker. It is killed when ctx
// ends, when the runner dies (childAttr), and when its stdin closes (the
// worker watches it).
func startChild(ctx context.Context, spec workerSpec) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), envWorker+"="+string(b))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = childAttr()
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting worker %d: %w", spec.Index, err)
	}
	c := &child{index: spec.Index, cmd: cmd, stdin: stdin, lines: make(chan string, 4), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 4<<20) // a result line holds a histogram
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
		c.done <- cmd.Wait() // Wait only after stdout is drained
	}()
	return c, nil
}

// expect waits up to d for the worker's next line.
func (c *child) expect(d time.Duration) (string, error) {
	select {
	case line, ok := <-c.lines:
		if !ok {
			return "", fmt.Errorf("worker %d exited early (its stderr above says why)", c.index)
		}
		return line, nil
	case <-time.After(d):
		return "", fmt.Errorf("worker %d said nothing for %v", c.index, d)
	}
}

// cpu is the CPU time (user and system) the worker process used over its
// life, or 0 before it has exited.
func (c *child) cpu() time.Duration {
	if st := c.cmd.ProcessState; st != nil {
		return st.UserTime() + st.SystemTime()
	}
	return 0
}

// end closes the worker's stdin, waits up to 10s for it to exit, and kills
// it if it has not. Safe to call more than once.
func (c *child) end() error {
	_ = c.stdin.Close()
	select {
	case err, ok := <-c.done:
		if !ok {
			return nil
		}
		close(c.done)
		return err
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		err := <-c.done
		close(c.done)
		return errors.Join(errors.New("killed after 10s"), err)
	}
}
