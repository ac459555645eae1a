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

// tree names the commit being measured and, when bench/ has moved on
// since, the last commit that changed the library (everything outside
// bench/), which is what the figures measure; and says when the library's
// files differ from it.
func tree() string {
	git := func(args ...string) string {
		out, err := exec.Command("git", args...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	top := git("rev-parse", "--show-toplevel")
	head := git("rev-parse", "--short", "HEAD")
	if top == "" || head == "" {
		return "an unknown commit"
	}
	s := "commit " + head
	if lib := git("-C", top, "log", "-1", "--format=%h", "--", ".", ":(exclude)bench"); lib != "" && lib != head {
		s += " (the library as at " + lib + ")"
	}
	if git("-C", top, "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)bench") != "" {
		s += " with uncommitted changes"
	}
	return s
}
