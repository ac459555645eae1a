//go:build ignore

package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

var (
	errLine     = regexp.MustCompile(`^(.+?\.go):(\d+):\d+: (.*)$`)
	undefinedRe = regexp.MustCompile(`undefined: shoalpgx\.(\w+)`)
	noMemberRe  = regexp.MustCompile(`type \*?(?:shoalpgx\.)?(\w+) has no field or method (\w+)`)
)

// compileError is one compiler error in a test file.
type compileError struct {
	file string
	line int
	name string // the shoalpgx name it says is missing, or the message
}

// printMissing maps each compiler error to the declaration it is in and
// prints, for each test, the missing names its own code or the helpers and
// types it uses run into.
func printMissing(pkgDir, modDir string, tests []testFunc, buildOutput []string) {
	var errs []compileError
	for _, o := range buildOutput {
		m := errLine.FindStringSubmatch(strings.TrimSpace(o))
		if m == nil {
			continue
		}
		path := m[1]
		if !filepath.IsAbs(path) {
			path = filepath.Join(modDir, path)
		}
		line, _ := strconv.Atoi(m[2])
		name := m[3]
		if u := undefinedRe.FindStringSubmatch(name); u != nil {
			name = u[1]
		} else if u := noMemberRe.FindStringSubmatch(name); u != nil {
			name = u[1] + "." + u[2]
		}
		errs = append(errs, compileError{file: filepath.Clean(path), line: line, name: name})
	}
	if len(errs) == 0 {
		return
	}
	g, err := declGraph(pkgDir)
	if err != nil {
		fmt.Println("  (could not map the errors to tests:", err, ")")
		return
	}
	perDecl := map[string][]string{}
	var names []string
	outside := false
	for _, e := range errs {
		d := g.at(e.file, e.line)
		if d == "" {
			outside = true
			continue
		}
		if !slices.Contains(perDecl[d], e.name) {
			perDecl[d] = append(perDecl[d], e.name)
		}
		if !slices.Contains(names, e.name) {
			names = append(names, e.name)
		}
	}
	sort.Strings(names)
	fmt.Println()
	fmt.Println("what the tests use that shoalpgx does not have: " + strings.Join(names, ", "))
	fmt.Println("tests that reach it (in their own code or the helpers and types they use):")
	reached := 0
	for _, t := range tests {
		var got []string
		for _, d := range g.reach(t.name) {
			for _, n := range perDecl[d] {
				if !slices.Contains(got, n) {
					got = append(got, n)
				}
			}
		}
		if len(got) > 0 {
			reached++
			sort.Strings(got)
			fmt.Printf("  %s: %s\n", t.name, strings.Join(got, ", "))
		}
	}
	fmt.Printf("%d of %d tests reach a missing name; the other %d use none\n", reached, len(tests), len(tests)-reached)
	if outside {
		fmt.Println("some errors are outside the test files (in shoalpgx or the module setup): see the errors above")
	}
}

// graph is the package's top-level declarations: where each is and which
// others it names.
type graph struct {
	spans map[string][]span // file -> declarations in it
	uses  map[string][]string
}

type span struct {
	name       string
	start, end int // lines
}

// declGraph parses the rewritten test files. A method is a declaration of
// its own ("T.M") that its type T uses, so a test that uses a type reaches
// the type's methods too.
func declGraph(dir string) (*graph, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	g := &graph{spans: map[string][]span{}, uses: map[string][]string{}}
	top := map[string]bool{}
	type node struct {
		name string
		n    ast.Node
	}
	var nodes []node
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		path = filepath.Clean(path)
		add := func(name string, n ast.Node) {
			nodes = append(nodes, node{name, n})
			g.spans[path] = append(g.spans[path], span{name, fset.Position(n.Pos()).Line, fset.Position(n.End()).Line})
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && len(d.Recv.List) == 1 {
					recv := recvName(d.Recv.List[0].Type)
					name := recv + "." + d.Name.Name
					g.uses[recv] = append(g.uses[recv], name)
					add(name, d)
					continue
				}
				top[d.Name.Name] = true
				add(d.Name.Name, d)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						top[s.Name.Name] = true
						add(s.Name.Name, s)
					case *ast.ValueSpec:
						for _, id := range s.Names {
							top[id.Name] = true
							add(id.Name, s)
						}
					}
				}
			}
		}
	}
	for _, nd := range nodes {
		ast.Inspect(nd.n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				ast.Inspect(n.X, func(n ast.Node) bool {
					if id, ok := n.(*ast.Ident); ok && top[id.Name] && id.Name != nd.name {
						g.uses[nd.name] = append(g.uses[nd.name], id.Name)
					}
					return true
				})
				return false
			case *ast.Ident:
				if top[n.Name] && n.Name != nd.name {
					g.uses[nd.name] = append(g.uses[nd.name], n.Name)
				}
			}
			return true
		})
	}
	return g, nil
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// at names the declaration that holds line of file, or "".
func (g *graph) at(file string, line int) string {
	for _, s := range g.spans[file] {
		if line >= s.start && line <= s.end {
			return s.name
		}
	}
	return ""
}

// reach lists the declarations name uses, directly or not, and name.
func (g *graph) reach(name string) []string {
	seen := map[string]bool{name: true}
	stack := []string{name}
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, u := range g.uses[d] {
			if !seen[u] {
				seen[u] = true
				stack = append(stack, u)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}
