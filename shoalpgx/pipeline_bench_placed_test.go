//go:build linux

package shoalpgx

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// BenchmarkPipelineLonePlaced is BenchmarkPipelineLone with the kernel's
// placement held still. On loopback a lone caller's round trip depends on
// whether its server backend runs on the caller's CPU (the wake-up stays
// on one CPU) or on another (it crosses to a CPU that may be idle), by
// several times on a small virtual machine, and the kernel places each
// pool's backend as it will: unpinned, that choice decides the ratio.
// Here this process and the backend each pool's lone caller uses are
// pinned with taskset, the backends on this process's CPU and then on
// another. It moves the PostgreSQL server's backends, so it runs only with
// SHOAL_BENCH_PIN=1, against a server on this machine that it may pin.
//
//	SHOAL_BENCH_PIN=1 go test -run XXX -bench PipelineLonePlaced -benchtime 20000x -count 3 ./shoalpgx
func BenchmarkPipelineLonePlaced(b *testing.B) {
	if os.Getenv("SHOAL_BENCH_PIN") != "1" {
		b.Skip("pins this process and server backends to CPUs: set SHOAL_BENCH_PIN=1 for a server on this machine")
	}
	if runtime.NumCPU() < 2 {
		b.Skip("needs two CPUs")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		b.Skip("no taskset")
	}
	off := openSettled(b, func(c *Config) { c.MaxConns = 4 })
	on := openSettled(b, func(c *Config) { c.MaxConns = 4; c.Pipeline = 16 })
	pids := []int{lonePID(b, off), lonePID(b, on)}
	every := fmt.Sprintf("0-%d", runtime.NumCPU()-1)
	pinCPU(b, os.Getpid(), "0", true)
	b.Cleanup(func() {
		pinCPU(b, os.Getpid(), every, true)
		for _, pid := range pids {
			pinCPU(b, pid, every, false)
		}
	})
	for _, c := range []struct{ name, cpu string }{{"same-cpu", "0"}, {"other-cpu", "1"}} {
		b.Run(c.name, func(b *testing.B) {
			for _, pid := range pids {
				pinCPU(b, pid, c.cpu, false)
			}
			loneAlternating(b, off, on)
			if lonePID(b, off) != pids[0] || lonePID(b, on) != pids[1] {
				b.Fatal("a lone caller moved to another backend, which was not pinned")
			}
		})
	}
}

// lonePID is the backend a lone caller of p runs on.
func lonePID(b *testing.B, p *Pool) int {
	var pid int
	if err := p.QueryRow(context.Background(), "select pg_backend_pid()").Scan(&pid); err != nil {
		b.Fatal(err)
	}
	return pid
}

// pinCPU sets the CPUs the process pid (with all set, every one of its
// threads) may run on.
func pinCPU(b *testing.B, pid int, cpus string, all bool) {
	args := []string{"-p", "-c", cpus, fmt.Sprint(pid)}
	if all {
		args = append([]string{"-a"}, args...)
	}
	if out, err := exec.Command("taskset", args...).CombinedOutput(); err != nil {
		b.Fatalf("taskset %v: %v: %s", args, err, out)
	}
}
