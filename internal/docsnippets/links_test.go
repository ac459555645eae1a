package docsnippets_test

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinks: every relative link of the docs (README.md, CONTRIBUTING.md,
// ARCHITECTURE.md, BENCHMARKS.md, CHANGELOG.md, docs/*.md) names a file
// that exists and, for a Markdown file, a heading it has: pages move and
// headings change, and a link left behind sends a reader nowhere.
func TestDocLinks(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files, err := docFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "ARCHITECTURE.md", "BENCHMARKS.md", "CHANGELOG.md")
	anchors := map[string]map[string]bool{} // file -> its headings' anchors
	anchorsOf := func(name string) map[string]bool {
		if a, ok := anchors[name]; ok {
			return a
		}
		text, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		anchors[name] = headingAnchors(string(text))
		return anchors[name]
	}
	for _, name := range files {
		text, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(string(text)) {
			target, anchor, _ := strings.Cut(l.target, "#")
			file := name
			if target != "" {
				file = path.Clean(path.Join(path.Dir(name), target))
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(file))); err != nil {
					t.Errorf("%s:%d: a link to %s, which does not exist", name, l.line, l.target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(file, ".md") && !anchorsOf(file)[anchor] {
				t.Errorf("%s:%d: a link to %s, but %s has no heading #%s", name, l.line, l.target, file, anchor)
			}
		}
	}
}

type link struct {
	line   int
	target string
}

// linkTarget finds the target of a Markdown link or image: [text](target).
var linkTarget = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// links returns the relative links of a Markdown text, outside fenced blocks
// and inline code.
func links(text string) []link {
	var found []link
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = inlineCode.ReplaceAllString(line, "")
		for _, m := range linkTarget.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			found = append(found, link{line: i + 1, target: target})
		}
	}
	return found
}

// inlineCode matches a code span.
var inlineCode = regexp.MustCompile("`[^`]*`")

// headingAnchors returns the anchors GitHub gives a Markdown text's headings:
// the heading's text in lower case, with what is neither a letter, a digit,
// a space, a hyphen nor an underscore dropped and spaces turned to hyphens;
// a repeated anchor gets -1, -2, ...
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		heading := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(heading) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			anchors[anchor+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[anchor] = true
		}
		seen[anchor]++
	}
	return anchors
}
