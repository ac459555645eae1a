package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// freezingProxy passes connections through to upstream until its freeze
// is called, and from then on carries no byte either way and answers no
// new connection, as a server that hangs does, without closing anything.
// It returns its address, freeze, and how many bytes it has carried.
func freezingProxy(t *testing.T, upstream string) (string, func(), *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var carried atomic.Int64
	frozen := make(chan struct{})
	var freezeOnce sync.Once
	freeze := func() { freezeOnce.Do(func() { close(frozen) }) }
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	track := func(c net.Conn) { mu.Lock(); open = append(open, c); mu.Unlock() }
	t.Cleanup(func() {
		freeze()
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	// pipe copies from src to dst until the proxy freezes; then it
	// stops reading, leaving the bytes in flight unanswered.
	pipe := func(dst, src net.Conn) {
		defer wg.Done()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			select {
			case <-frozen:
				return
			default:
			}
			if n > 0 {
				carried.Add(int64(n))
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			track(c)
			select {
			case <-frozen:
				continue // held open, never answered
			default:
			}
			up, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			track(up)
			wg.Add(2)
			go pipe(up, c)
			go pipe(c, up)
		}
	}()
	return ln.Addr().String(), freeze, &carried
}

// TestSecondCtrlCQuits: after Ctrl-C, closing the connections to a server
// that hangs takes seconds; shoal says so, and a second Ctrl-C quits at
// once with status 130, as the first one's note says.
func TestSecondCtrlCQuits(t *testing.T) {
	u, err := url.Parse(postgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	addr, freeze, carried := freezingProxy(t, u.Host)
	u.Host = addr
	cmd := exec.Command(os.Args[0], "bench", "--target", u.String(), "--only", "churn", "--rounds", "1", "--warmup", "0s", "--duration", "1h")
	cmd.Env = append(os.Environ(), asCommandEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 100)
	var all bytes.Buffer
	var allMu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			allMu.Lock()
			all.WriteString(sc.Text() + "\n")
			allMu.Unlock()
			select {
			case lines <- sc.Text():
			default:
			}
		}
		exited <- cmd.Wait()
	}()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	dump := func() string { allMu.Lock(); defer allMu.Unlock(); return all.String() }

	// A megabyte carried is thousands of statements: the pool is open and
	// measuring, with connections to close when the server hangs.
	deadline := time.Now().Add(30 * time.Second)
	for carried.Load() < 1<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("the run never got going; stderr:\n%s", dump())
		}
		time.Sleep(10 * time.Millisecond)
	}
	freeze()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	wait := time.NewTimer(30 * time.Second)
	defer wait.Stop()
	for noted := false; !noted; {
		select {
		case line := <-lines:
			noted = strings.Contains(line, "Ctrl-C again")
		case err := <-exited:
			exited <- err
			t.Fatalf("exited (%v) before the second Ctrl-C without saying it was still closing; stderr:\n%s", err, dump())
		case <-wait.C:
			t.Fatalf("no note that it is still closing, and no second Ctrl-C offered; stderr:\n%s", dump())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
			t.Errorf("exit %v, want status %d; stderr:\n%s", err, exitInterrupted, dump())
		}
		if !strings.Contains(dump(), "quitting") {
			t.Errorf("stderr does not say it quit on the second Ctrl-C:\n%s", dump())
		}
	case <-wait.C:
		t.Fatalf("the second Ctrl-C did not end it; stderr:\n%s", dump())
	}
}
