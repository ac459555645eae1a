package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestDescribeVersion(t *testing.T) {
	for _, tc := range []struct {
		b    stampedBuild
		co   *checkout
		want []string
	}{
		{stampedBuild{version: "(devel)", revision: "ea934f66bb591166fa33aa34db9edb4bb3f71520"}, nil,
			[]string{"shoal (devel) (commit ea934f66bb59), go"}},
		{stampedBuild{version: "v1.2.3", revision: "ea934f66bb59116", modified: true}, nil,
			[]string{"shoal v1.2.3 (commit ea934f66bb59, modified), go"}},
		{stampedBuild{version: "(devel)"}, &checkout{dir: "/src/shoal", revision: "0123456789abcdef0123", modified: true},
			[]string{"shoal (devel) (commit 0123456789ab, modified, of the checkout go run built it from, /src/shoal), go"}},
		{stampedBuild{version: "(devel)"}, nil,
			[]string{"shoal (devel), commit unknown, go", "-buildvcs=false", "git worktree", `-ldflags "-X main.buildCommit=$(git rev-parse HEAD)"`}},
	} {
		got := describeVersion(tc.b, tc.co)
		for _, want := range tc.want {
			if !strings.Contains(got, want) {
				t.Errorf("describeVersion(%+v, %+v) = %q, lacks %q", tc.b, tc.co, got, want)
			}
		}
	}
}

func TestBuiltByGoRun(t *testing.T) {
	for exe, want := range map[string]bool{
		"/tmp/go-build2277656416/b001/exe/shoal":                                                            true,
		"/root/.cache/go-build/f0/f01875484d3f2fa4aca80857303e5d4f62242d6095336b1bf10bedc3d65ffb1b-d/shoal": true,
		"/tmp/go-build2277656416/b001/shoal.test":                                                           false,
		"/home/me/shoal/shoal":                                                                              false,
		"/usr/local/bin/shoal":                                                                              false,
	} {
		if got := builtByGoRun(exe); got != want {
			t.Errorf("builtByGoRun(%s) = %v, want %v", exe, got, want)
		}
	}
}

// headCommit is the checkout's commit, or skips the test without git.
func headCommit(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("git: %v", err)
	}
	return strings.TrimSpace(string(out))[:12]
}

// goCommand runs the go command in this directory with GOFLAGS as this
// machine sets it (no version control stamp), as a user's go run is.
func goCommand(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go command: %v", err)
	}
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestVersionUnderGoRun: `go run . version`, the README's way, names the
// checkout's commit, although go run stamps none.
func TestVersionUnderGoRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	head := headCommit(t)
	out := goCommand(t, "run", ".", "version")
	if !strings.Contains(out, "commit "+head) || !strings.Contains(out, "of the checkout go run built it from") {
		t.Errorf("go run . version: %q, want commit %s", out, head)
	}
}

// TestVersionOfAnUnstampedBinary: a binary built without a stamp says it
// cannot tell and how to build one that can; built that way, it names
// the commit.
func TestVersionOfAnUnstampedBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	head := headCommit(t)
	bin := filepath.Join(t.TempDir(), "shoal")
	goCommand(t, "build", "-o", bin, ".")
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(out), "commit unknown") || !strings.Contains(string(out), "main.buildCommit") {
		t.Errorf("unstamped binary: %q, %v", out, err)
	}
	goCommand(t, "build", "-ldflags", "-X main.buildCommit="+head, "-o", bin, ".")
	out, err = exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(out), "(commit "+head+")") {
		t.Errorf("binary built with -X main.buildCommit: %q, %v", out, err)
	}
}
