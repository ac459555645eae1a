package main

import (
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// machine is the report's machine line.
func machine(pgVersion string) string {
	s := fmt.Sprintf("%s/%s, %d CPUs (GOMAXPROCS %d), %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
	if pgVersion != "" {
		s += ", " + pgVersion + " on loopback"
	}
	return s + ", " + time.Now().UTC().Format("2006-01-02 15:04 UTC") + ", shoal at " + tree()
}

// tree names the commit being measured, and says when shoal's files
// (those outside bench/) differ from it.
func tree() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "an unknown commit"
	}
	s := "commit " + strings.TrimSpace(string(out))
	dirty, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no", "--", "..", ":(exclude)../bench").Output()
	if err == nil && len(strings.TrimSpace(string(dirty))) > 0 {
		s += " with uncommitted changes"
	}
	return s
}
