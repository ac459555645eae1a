package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Pinning for the 1-worker cells (-pin-lone). A lone caller waits on its
// backend for every statement, and on loopback the round trip depends on
// whether the kernel put that backend on the caller's CPU (the wake-up
// stays there) or on another (it crosses to a CPU that may be idle): on a
// two-CPU machine the two differ by several times, whatever the pool, and
// each contender's backend lands where it lands. Pinned, this process and
// every server process on this machine share one CPU, so each contender's
// lone caller sits beside its backend and the cell compares the pools.

// serverProcs lists the processes to pin beside this one: the PostgreSQL
// server behind dsn (its postmaster, whose future backends inherit the
// pin, and every process it runs) and any PgBouncer on this machine.
func serverProcs(ctx context.Context, dsn string) ([]int, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	var backend int
	if err := conn.QueryRow(ctx, "select pg_backend_pid()").Scan(&backend); err != nil {
		return nil, err
	}
	postmaster, err := parentPID(backend)
	if err != nil {
		return nil, fmt.Errorf("the server's postmaster (is the server on this machine?): %w", err)
	}
	pids := []int{postmaster}
	children, _ := exec.CommandContext(ctx, "pgrep", "-P", strconv.Itoa(postmaster)).Output()
	pids = append(pids, parsePIDs(children)...)
	bouncers, _ := exec.CommandContext(ctx, "pgrep", "-x", "pgbouncer").Output()
	return append(pids, parsePIDs(bouncers)...), nil
}

// parentPID reads pid's parent from /proc.
func parentPID(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// pid (comm) state ppid ...; comm may hold spaces, so read after its ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("unexpected /proc stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, errors.New("unexpected /proc stat")
	}
	return strconv.Atoi(f[1])
}

func parsePIDs(out []byte) []int {
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

// pinner pins and unpins this process and the server's for the lone cells.
type pinner struct {
	dsn string
}

// pin puts this process and the server's on CPU 0.
func (p pinner) pin(ctx context.Context) error { return p.set(ctx, "0") }

// unpin lets them run on every CPU again.
func (p pinner) unpin(ctx context.Context) error {
	return p.set(ctx, fmt.Sprintf("0-%d", runtime.NumCPU()-1))
}

func (p pinner) set(ctx context.Context, cpus string) error {
	pids, err := serverProcs(ctx, p.dsn)
	if err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, "taskset", "-a", "-p", "-c", cpus, strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
		return fmt.Errorf("taskset on this process: %v: %s", err, out)
	}
	for _, pid := range pids {
		// A process that ended meanwhile is no matter.
		_ = exec.CommandContext(ctx, "taskset", "-a", "-p", "-c", cpus, strconv.Itoa(pid)).Run()
	}
	return nil
}
