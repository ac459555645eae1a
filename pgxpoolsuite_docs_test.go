package shoal

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// docs/from-pgxpool.md says how many of pgx's pgxpool tests pass against
// shoalpgx and names, beside each difference, the suite's test that fails
// for it; scripts/pgxpool-suite/expected-failures.txt lists the tests
// scripts/pgxpool-suite.sh lets fail. They must agree: the counts add up,
// and the page names exactly the listed tests.
func TestFromPgxpoolNamesTheExpectedFailures(t *testing.T) {
	raw, err := os.ReadFile("scripts/pgxpool-suite/expected-failures.txt")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			listed = append(listed, f[0])
		}
	}
	doc, err := os.ReadFile("docs/from-pgxpool.md")
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`\s*\n\s*`).ReplaceAllString(string(doc), " ")
	var named []string
	for _, m := range regexp.MustCompile("\\(Suite: `(\\w+)`\\.\\)").FindAllStringSubmatch(text, -1) {
		named = append(named, m[1])
	}
	slices.Sort(listed)
	slices.Sort(named)
	if !slices.Equal(listed, named) {
		t.Errorf("expected-failures.txt lists %v; from-pgxpool.md names %v", listed, named)
	}
	m := regexp.MustCompile(`(\d+) of its (\d+) tests pass, and the (\d+) that do not`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal(`from-pgxpool.md no longer says "N of its M tests pass, and the K that do not"`)
	}
	pass, all, fail := atoi(m[1]), atoi(m[2]), atoi(m[3])
	if pass+fail != all || fail != len(listed) {
		t.Errorf("from-pgxpool.md: %d of %d pass and %d do not; expected-failures.txt lists %d", pass, all, fail, len(listed))
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
