//go:build ignore

package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
)

// testFunc is one Test function of the suite's source.
type testFunc struct {
	name     string
	file     string
	internal bool // in package pgxpool, not pgxpool_test: it reaches unexported names
}

// sourceTests lists the Test functions of pgx's pgxpool tests, in file and
// source order, marking those of package pgxpool as internal.
func sourceTests(dir string) ([]testFunc, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no test files in %s", dir)
	}
	sort.Strings(files)
	var tests []testFunc
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		internal := !strings.HasSuffix(f.Name.Name, "_test")
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && isTest(fd) {
				tests = append(tests, testFunc{name: fd.Name.Name, file: filepath.Base(path), internal: internal})
			}
		}
	}
	return tests, nil
}

// isTest reports whether fd is a test go test runs: func TestXxx(*testing.T).
func isTest(fd *ast.FuncDecl) bool {
	name := fd.Name.Name
	if fd.Recv != nil || !strings.HasPrefix(name, "Test") || name == "TestMain" {
		return false
	}
	if rest := name[len("Test"):]; rest != "" && rest[0] >= 'a' && rest[0] <= 'z' {
		return false
	}
	params := fd.Type.Params.List
	if len(params) != 1 || len(params[0].Names) > 1 {
		return false
	}
	star, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "testing" && sel.Sel.Name == "T"
}
