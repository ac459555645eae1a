package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version describes the build: the module version (or "(devel)" from a
// checkout), the commit and whether the tree was modified, and the Go
// version.
func version() string {
	v, rev, dirty := "(unknown)", "", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		v = bi.Main.Version
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision":
				rev = s.Value
			case s.Key == "vcs.modified" && s.Value == "true":
				dirty = ", modified"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		rev = " (commit " + rev + dirty + ")"
	}
	return fmt.Sprintf("shoal %s%s, %s %s/%s", v, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
