package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// pooledQueries is how many writes from the client mark a connection as
// a pool's: the probe's login and one query take five, and the pool runs
// its query, one write each, for a second.
const pooledQueries = 10

// secondCaseProxy passes connections through to upstream until a pooled
// connection (one its client wrote to pooledQueries times or more) has
// closed: the pooled case has ended, its pool closed. Every connection
// after that, the next case's, is held open without a word, so that the
// next case cannot finish whatever the machine's speed, and began is
// closed. It returns the proxy's address and began.
func secondCaseProxy(t *testing.T, upstream string) (string, <-chan struct{}) {
	t.Helper()
	var poolClosed atomic.Bool
	began := make(chan struct{})
	var beganOnce sync.Once
	held := make(chan struct{})
	addr := serveLoopback(t, func(c net.Conn) {
		if poolClosed.Load() {
			beganOnce.Do(func() { close(began) })
			<-held
			return
		}
		up, err := net.Dial("tcp", upstream)
		if err != nil {
			return
		}
		defer up.Close()
		answered := make(chan struct{})
		go func() { _, _ = io.Copy(c, up); close(answered) }()
		writes := 0
		buf := make([]byte, 32<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				writes++
				if _, werr := up.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		if writes >= pooledQueries {
			poolClosed.Store(true)
		}
		up.Close()
		<-answered
	})
	t.Cleanup(func() { close(held) }) // before serveLoopback's, which waits for the held
	return addr, began
}

// interruptAfterFirstCase runs the command as a process of its own, with
// stdout to a file, bench's churn against the test PostgreSQL through a
// secondCaseProxy: its first case, the pooled one, finishes; Ctrl-C comes
// while the second waits for the server. It returns the exit status, the
// file's content and stderr.
func interruptAfterFirstCase(t *testing.T, format string) (int, []byte, string) {
	t.Helper()
	u, err := url.Parse(postgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	addr, began := secondCaseProxy(t, u.Host)
	u.Host = addr
	outPath := filepath.Join(t.TempDir(), "out")
	outFile, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer outFile.Close()
	cmd := exec.Command(os.Args[0], "bench", "--target", u.String(), "--only", "churn", "--workers", "1",
		"--rounds", "1", "--warmup", "0s", "--duration", "1s", "--dial-timeout", "1h", format)
	cmd.Env = append(os.Environ(), asCommandEnv+"=1")
	cmd.Stdout = outFile
	var stderr bytes.Buffer // read only once the process has exited
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ended := false
	defer func() {
		if !ended {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	bound := time.NewTimer(60 * time.Second)
	defer bound.Stop()
	select {
	case <-began:
	case err := <-exited:
		ended = true
		t.Fatalf("exited (%v) before its second case began; stderr:\n%s", err, stderr.String())
	case <-bound.C:
		t.Fatal("the second case never began")
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var exitErr error
	select {
	case exitErr = <-exited:
		ended = true
	case <-bound.C:
		t.Fatal("Ctrl-C did not end the run")
	}
	code := exitOK
	var ee *exec.ExitError
	switch {
	case errors.As(exitErr, &ee):
		code = ee.ExitCode()
	case exitErr != nil:
		t.Fatal(exitErr)
	}
	out, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	return code, out, stderr.String()
}

// TestInterruptedJSONHoldsTheFinishedCase: Ctrl-C sent to the command, as
// a process with its stdout in a file, after its first case finished and
// while the second runs, leaves in the file one whole JSON document
// marked interrupted, with the finished case's figures and the
// interrupted one said to be so; status 130, and stderr says where the
// results went.
func TestInterruptedJSONHoldsTheFinishedCase(t *testing.T) {
	code, out, stderr := interruptAfterFirstCase(t, "--json")
	if code != exitInterrupted {
		t.Errorf("exit status %d, want %d; stderr:\n%s", code, exitInterrupted, stderr)
	}
	if !strings.Contains(stderr, "shoal bench: interrupted; the JSON on stdout holds the results that finished") {
		t.Errorf("stderr does not say where the results went:\n%s", stderr)
	}
	var rep benchrun.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, out)
	}
	if !rep.Interrupted {
		t.Errorf("the JSON does not say the run was interrupted:\n%s", out)
	}
	var results []benchrun.Result
	for _, s := range rep.Scenarios {
		for _, g := range s.Groups {
			results = append(results, g.Results...)
		}
	}
	finished := slices.IndexFunc(results, func(r benchrun.Result) bool { return r.Name == "shoalpgx_pool" })
	if finished < 0 || results[finished].Status != benchrun.StatusOK || results[finished].Ops == 0 || results[finished].IPS <= 0 {
		t.Errorf("the JSON lacks the finished case's figures:\n%s", out)
	}
	if !slices.ContainsFunc(results, func(r benchrun.Result) bool {
		return r.Name == "new_conn_per_query" && r.Status == benchrun.StatusInterrupted
	}) {
		t.Errorf("the JSON does not say the second case was interrupted:\n%s", out)
	}
}

// TestInterruptedCSVHoldsTheFinishedCase: as for JSON, the CSV file holds
// its header and a whole row for every case, the finished one with its
// figures, the interrupted one said to be so.
func TestInterruptedCSVHoldsTheFinishedCase(t *testing.T) {
	code, out, stderr := interruptAfterFirstCase(t, "--csv")
	if code != exitInterrupted {
		t.Errorf("exit status %d, want %d; stderr:\n%s", code, exitInterrupted, stderr)
	}
	if !strings.Contains(stderr, "shoal bench: interrupted; the CSV on stdout holds the results that finished") {
		t.Errorf("stderr does not say where the results went:\n%s", stderr)
	}
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll() // every row as wide as the header
	if err != nil {
		t.Fatalf("stdout is not whole CSV: %v\n%s", err, out)
	}
	if len(rows) == 0 || rows[0][0] != "scenario" {
		t.Fatalf("the CSV has no header:\n%s", out)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	var finished, interrupted bool
	for _, row := range rows[1:] {
		switch name, status := row[col["name"]], row[col["status"]]; {
		case name == "shoalpgx_pool" && status == string(benchrun.StatusOK):
			ops, err := strconv.ParseInt(row[col["ops"]], 10, 64)
			finished = err == nil && ops > 0
		case name == "new_conn_per_query" && status == string(benchrun.StatusInterrupted):
			interrupted = true
		}
	}
	if !finished || !interrupted {
		t.Errorf("the CSV lacks the finished case's figures (%t) or the interrupted case (%t):\n%s", finished, interrupted, out)
	}
}
