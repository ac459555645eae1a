package docsnippets_test

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSnippetsCompile builds every ```go block of README.md, CONTRIBUTING.md
// and docs/*.md against the repository's modules. Each block becomes a
// package of its own in a throwaway module that requires what this one
// requires: a block that starts with a package clause as it is, any other as
// the body of a function (see wrapBody and prelude). A block that does not
// compile fails the test, and the compiler's errors name the Markdown
// file's line.
func TestSnippetsCompile(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files, err := docFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	var snippets []snippet
	for _, name := range files {
		found, err := extract(root, name)
		if err != nil {
			t.Fatal(err)
		}
		snippets = append(snippets, found...)
	}
	if len(snippets) == 0 {
		t.Fatalf("no ```go block in %s", strings.Join(files, ", "))
	}
	failed := compile(t, snippets)
	for s, errs := range failed {
		t.Errorf("the ```go block at %s does not compile:\n%s", s.where(), errs)
	}
	t.Logf("%d of %d snippets from %s compile", len(snippets)-len(failed), len(snippets), strings.Join(files, ", "))
}

// TestABrokenSnippetIsNamed: a block that does not compile is reported with
// the Markdown file's line of the error, and the blocks beside it that do
// compile are not.
func TestABrokenSnippetIsNamed(t *testing.T) {
	good := snippet{file: "docs/good.md", line: 10, code: "pool, err := shoalpgx.New(ctx, \"postgres://app@db/app\")\n"}
	file := snippet{file: "docs/good.md", line: 20, code: "package main\n\nfunc main() {}\n"}
	bad := snippet{file: "docs/bad.md", line: 30, code: "pool, err := shoal.New(shoal.Config[net.Conn]{Dial: dial})\npool.NoSuchMethod()\n"}
	failed := compile(t, []snippet{good, file, bad})
	if len(failed) != 1 {
		t.Fatalf("%d snippets failed, want only docs/bad.md's: %v", len(failed), failed)
	}
	errs, ok := failed[bad]
	if !ok || !strings.Contains(errs, "docs/bad.md:31:") || !strings.Contains(errs, "NoSuchMethod") {
		t.Errorf("the broken snippet's errors = %q, want NoSuchMethod at docs/bad.md:31", errs)
	}
}

// TestSnippetImportsAreRequired: every package a body snippet may name
// outside the standard library is imported by imports_test.go, so that this
// module requires its module.
func TestSnippetImportsAreRequired(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "imports_test.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	imported := map[string]bool{}
	for _, spec := range f.Imports {
		path, _ := strconv.Unquote(spec.Path.Value)
		imported[path] = true
	}
	for name, path := range snippetImports {
		if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") && !imported[path] {
			t.Errorf("snippetImports[%q] = %q, which imports_test.go does not import", name, path)
		}
	}
}

// compile builds the snippets and returns the compiler's errors of each one
// that failed.
func compile(t *testing.T, snippets []snippet) map[snippet]string {
	t.Helper()
	dir := t.TempDir()
	writeModule(t, dir)
	byPackage := map[string]snippet{}
	failed := map[snippet]string{}
	for i, s := range snippets {
		name := fmt.Sprintf("s%03d", i)
		pkgDir := filepath.Join(dir, name)
		if err := os.Mkdir(pkgDir, 0o755); err != nil {
			t.Fatal(err)
		}
		var src string
		if s.isFile() {
			src = fmt.Sprintf("//line %s:%d\n%s", s.file, s.line, s.code)
		} else {
			wrapped, err := wrapBody(s)
			if err != nil {
				failed[s] = err.Error()
				continue
			}
			src = wrapped
			writeFile(t, filepath.Join(pkgDir, "prelude.go"), prelude)
		}
		writeFile(t, filepath.Join(pkgDir, "snippet.go"), src)
		byPackage[modulePath+"/"+name] = s
	}

	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS="+os.Getenv("GOFLAGS")+" -mod=mod")
	out, err := cmd.CombinedOutput()
	if err == nil {
		return failed
	}
	// go build prints "# package" above each package's errors.
	var current *snippet
	var unplaced bytes.Buffer
	for line := range strings.SplitSeq(string(out), "\n") {
		if pkg, ok := strings.CutPrefix(line, "# "); ok {
			if s, ok := byPackage[pkg]; ok {
				current = &s
				continue
			}
		}
		if current != nil && line != "" {
			failed[*current] += line + "\n"
		} else if line != "" {
			unplaced.WriteString(line + "\n")
		}
	}
	if len(failed) == 0 {
		t.Fatalf("go build in %s: %v\n%s", dir, err, unplaced.String())
	}
	return failed
}

// modulePath is the throwaway module's path.
const modulePath = "docsnippets.example"

// replaceDir finds a replace directive's relative directory.
var replaceDir = regexp.MustCompile(`=>\s+(\.\S*)`)

// writeModule writes dir's go.mod and go.sum: this module's, under another
// module path, with its replace directives' directories made absolute.
func writeModule(t *testing.T, dir string) {
	t.Helper()
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for line := range strings.SplitSeq(string(mod), "\n") {
		switch {
		case strings.HasPrefix(line, "module "):
			line = "module " + modulePath
		case replaceDir.MatchString(line):
			m := replaceDir.FindStringSubmatch(line)
			line = strings.Replace(line, m[1], filepath.Join(here, m[1]), 1)
		}
		b.WriteString(line + "\n")
	}
	writeFile(t, filepath.Join(dir, "go.mod"), b.String())
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "go.sum"), string(sum))
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
