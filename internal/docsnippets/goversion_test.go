package docsnippets_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeNamesTheWorkspaceGo: README.md names the Go that the
// checkout's go.work asks for. It can be newer than the modules' own
// (bench/ takes in a peer that requires it), and `go work use -r` and `go
// -C cmd/shoal run .` both need it: a reader whose go may not fetch a
// toolchain (GOTOOLCHAIN=local) learns it before the command fails.
func TestReadmeNamesTheWorkspaceGo(t *testing.T) {
	root := filepath.Join("..", "..")
	work, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go ([0-9.]+)$`).FindSubmatch(work)
	if m == nil {
		t.Fatal("go.work has no go line")
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "Go " + string(m[1]); !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not say %q, the version go.work asks for", want)
	}
}
