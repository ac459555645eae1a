package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// buildCommit names the commit of a binary Go could not stamp (a git
// worktree, GOFLAGS=-buildvcs=false):
//
//	go -C cmd/shoal build -ldflags "-X main.buildCommit=$(git rev-parse HEAD)" -o "$PWD/shoal" .
var buildCommit string

// stampedBuild is what the binary says about its own build.
type stampedBuild struct {
	version  string // the module's version, "(devel)" from a checkout
	revision string // the commit, "" when the build was not stamped
	modified bool   // the tree had changes the commit does not hold
}

// readBuild reads the version control stamp Go puts in a binary, or
// buildCommit.
func readBuild() stampedBuild {
	b := stampedBuild{version: "(unknown)"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		b.version = bi.Main.Version
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision":
				b.revision = s.Value
			case s.Key == "vcs.modified" && s.Value == "true":
				b.modified = true
			}
		}
	}
	if b.revision == "" {
		b.revision = buildCommit
	}
	return b
}

// checkout is the commit a `go run` binary was just built from, read
// from its source checkout.
type checkout struct {
	dir      string
	revision string
	modified bool
}

// version describes the build: the module version, the commit and whether
// the tree was modified, and the Go version. `go run` never stamps the
// commit into what it builds, so a binary built by it asks git for the
// commit of the checkout it was built from; any other unstamped binary
// says that it cannot tell, and how to build one that can.
func version() string {
	b := readBuild()
	var co *checkout
	if b.revision == "" {
		if exe, err := os.Executable(); err == nil && builtByGoRun(exe) {
			co = sourceCheckout()
		}
	}
	return describeVersion(b, co)
}

// describeVersion writes what version prints.
func describeVersion(b stampedBuild, co *checkout) string {
	platform := fmt.Sprintf("%s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	switch {
	case b.revision != "":
		return fmt.Sprintf("shoal %s (commit %s%s), %s", b.version, short(b.revision), modifiedNote(b.modified), platform)
	case co != nil:
		return fmt.Sprintf("shoal %s (commit %s%s, of the checkout go run built it from, %s), %s",
			b.version, short(co.revision), modifiedNote(co.modified), co.dir, platform)
	}
	return fmt.Sprintf(`shoal %s, commit unknown, %s
This binary was built without version control information (GOFLAGS has
-buildvcs=false, or it was built in a git worktree, which Go does not
stamp, or without git), so it cannot name its commit. To build one that
does, from the repository's root:
  go -C cmd/shoal build -ldflags "-X main.buildCommit=$(git rev-parse HEAD)" -o "$PWD/shoal" .`, b.version, platform)
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

func modifiedNote(modified bool) string {
	if modified {
		return ", modified"
	}
	return ""
}

// builtByGoRun reports whether exe is a binary `go run` built: in a
// temporary go-build directory (…/go-build123/b001/exe/shoal), or in the
// build cache, where Go keeps what go run builds (…/go-build/ab/<64 hex
// digits>-d/shoal).
func builtByGoRun(exe string) bool {
	dir := filepath.Dir(exe)
	if filepath.Base(dir) == "exe" && strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(dir))), "go-build") {
		return true
	}
	name, parent := filepath.Base(dir), filepath.Base(filepath.Dir(dir))
	return len(name) == 66 && strings.HasSuffix(name, "-d") && isHex(name[:64]) && len(parent) == 2 && isHex(parent)
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return s != ""
}

// sourceCheckout asks git for the commit of the checkout this file was
// compiled from, or of the working directory when the build trimmed
// paths; nil when git cannot tell.
func sourceCheckout() *checkout {
	dir := ""
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir = filepath.Dir(file)
	} else if wd, err := os.Getwd(); err == nil {
		dir = wd
	}
	if dir == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	git := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
		return strings.TrimSpace(string(out)), err
	}
	rev, err := git("rev-parse", "HEAD")
	if err != nil || rev == "" {
		return nil
	}
	root, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return nil
	}
	status, err := git("status", "--porcelain")
	if err != nil {
		return nil
	}
	return &checkout{dir: root, revision: rev, modified: status != ""}
}
