package docsnippets_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"sort"
	"strings"
)

// prelude declares what a snippet that is a function body may use without
// declaring it; CONTRIBUTING.md lists these names, and a new one goes there
// too.
const prelude = `package snippet

import (
	"context"
	"net"

	clientv3 "go.etcd.io/etcd/client/v3"
)

var (
	// ctx is the caller's context.
	ctx = context.Background()
	// err lets a snippet assign to err without declaring it.
	err error
	// dial opens a TCP connection, for a core pool's Config.Dial.
	dial = func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", "127.0.0.1:6379")
	}
	// etcdClient is a connected etcd client, for shoaletcd.
	etcdClient *clientv3.Client
)

// use stands for whatever the program does with a value.
func use(any) {}
`

// wrapBody turns a snippet that is a function body into a Go file of
// package snippet: the body becomes that of a function returning error, a
// //line directive points the compiler's positions at the Markdown file,
// the packages the body names (from snippetImports) are imported, and every
// variable it declares is used, so that Go's "declared and not used" does
// not fail a snippet that shows a result without using it. Line numbers are
// kept: what is added to the body goes at the end of the line that needs it.
func wrapBody(s snippet) (string, error) {
	const head = "package snippet\n\nfunc snippet() error {\n"
	directive := fmt.Sprintf("//line %s:%d\n", s.file, s.line)
	src := head + directive + s.code + "\n\treturn nil\n}\n"
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "snippet.go", src, parser.AllErrors|parser.SkipObjectResolution)
	if err != nil {
		return "", err // positions already name the Markdown file
	}

	base := len(head) + len(directive) // the offset of the body's first byte
	type insert struct {
		at   int
		text string
	}
	var inserts []insert
	use := func(at token.Pos, names []*ast.Ident, before, after string) {
		var b strings.Builder
		for _, n := range names {
			if n.Name != "_" {
				fmt.Fprintf(&b, "%s_ = %s%s", before, n.Name, after)
			}
		}
		if b.Len() > 0 {
			inserts = append(inserts, insert{fset.File(at).Offset(at) - base, b.String()})
		}
	}
	// Only statements that stand in a block's list get a use after them: an
	// if's or a for's init statement cannot take one.
	list := func(stmts []ast.Stmt) {
		for _, st := range stmts {
			switch st := st.(type) {
			case *ast.AssignStmt:
				if st.Tok == token.DEFINE {
					use(st.End(), identsOf(st.Lhs), "; ", "")
				}
			case *ast.DeclStmt:
				if gd, ok := st.Decl.(*ast.GenDecl); ok && gd.Tok == token.VAR {
					for _, spec := range gd.Specs {
						use(st.End(), spec.(*ast.ValueSpec).Names, "; ", "")
					}
				}
			}
		}
	}
	declared := map[string]bool{}
	used := map[string]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BlockStmt:
			list(n.List)
		case *ast.CaseClause:
			list(n.Body)
		case *ast.CommClause:
			list(n.Body)
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				use(n.Body.Lbrace+1, identsOf([]ast.Expr{n.Key, n.Value}), " ", ";")
			}
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, id := range identsOf(n.Lhs) {
					declared[id.Name] = true
				}
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				declared[id.Name] = true
			}
		case *ast.Field:
			for _, id := range n.Names {
				declared[id.Name] = true
			}
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})

	code := s.code
	sort.Slice(inserts, func(i, j int) bool { return inserts[i].at > inserts[j].at })
	for _, in := range inserts {
		code = code[:in.at] + in.text + code[in.at:]
	}

	var imports []string
	for name := range used {
		if path, ok := snippetImports[name]; ok && !declared[name] {
			imports = append(imports, fmt.Sprintf("\t%s %q\n", name, path))
		}
	}
	slices.Sort(imports)
	return "package snippet\n\nimport (\n" + strings.Join(imports, "") + ")\n\n" +
		"func snippet() error {\n" + directive + code + "\n\treturn nil\n}\n", nil
}

// identsOf returns the identifiers among exprs (the left side of a :=).
func identsOf(exprs []ast.Expr) []*ast.Ident {
	var ids []*ast.Ident
	for _, e := range exprs {
		if id, ok := e.(*ast.Ident); ok {
			ids = append(ids, id)
		}
	}
	return ids
}
