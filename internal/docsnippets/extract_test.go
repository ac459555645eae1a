package docsnippets_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A snippet is one ```go block of a Markdown file.
type snippet struct {
	file string // the Markdown file, relative to the repository's root
	line int    // the line of the block's first line of code
	code string
}

// where names the snippet as an editor would: file and line.
func (s snippet) where() string { return fmt.Sprintf("%s:%d", s.file, s.line) }

// isFile reports whether the snippet is a whole Go file: its first line that
// is neither blank nor a comment is a package clause.
func (s snippet) isFile() bool {
	for line := range strings.SplitSeq(s.code, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		return strings.HasPrefix(line, "package ")
	}
	return false
}

// docFiles lists the Markdown files whose snippets are compiled, relative
// to root: README.md, CONTRIBUTING.md and docs/*.md.
func docFiles(root string) ([]string, error) {
	files := []string{"README.md", "CONTRIBUTING.md"}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	for _, p := range pages {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil, err
		}
		files = append(files, filepath.ToSlash(rel))
	}
	return files, nil
}

// extract returns the ```go blocks of the Markdown file at root/name. A
// fence may be indented (inside a list item); the block's lines lose that
// indentation. Blocks fenced otherwise (``` alone, ```text, ```sh) are not
// Go and are left alone.
func extract(root, name string) ([]snippet, error) {
	f, err := os.Open(filepath.Join(root, name))
	if err != nil {
		return nil, err
	}
	defer f.Close()

	var (
		snippets []snippet
		inGo     bool
		indent   string
		start    int
		code     strings.Builder
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if !inGo {
			if strings.TrimRight(trimmed, " ") == "```go" {
				inGo, indent, start = true, line[:len(line)-len(trimmed)], n+1
				code.Reset()
			}
			continue
		}
		if strings.TrimRight(trimmed, " ") == "```" {
			snippets = append(snippets, snippet{file: name, line: start, code: code.String()})
			inGo = false
			continue
		}
		code.WriteString(strings.TrimPrefix(line, indent))
		code.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if inGo {
		return nil, fmt.Errorf("%s:%d: a ```go block that never ends", name, start-1)
	}
	return snippets, nil
}
