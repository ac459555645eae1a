package shoal

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// The barging figures are stated once, as barge.go's constants; the field's
// go doc, the README and docs/core.md restate them for users. Each must
// restate the constants as they are: one changed alone fails here.
func TestBargingFiguresInTheDocsAreTheConstants(t *testing.T) {
	figures := map[string]*regexp.Regexp{
		"crowdPerConn":     regexp.MustCompile(`\b` + strconv.Itoa(crowdPerConn) + ` (callers|waiters) (wait )?per`),
		"maxStretch":       regexp.MustCompile(`\b` + strconv.Itoa(maxStretch) + ` times`),
		"idleGrace":        regexp.MustCompile(`(within|for) ` + regexp.QuoteMeta(idleGrace.String())),
		"suspendAfterMiss": regexp.MustCompile(`barging (pauses )?for ` + regexp.QuoteMeta(suspendAfterMiss.String())),
	}
	// Line breaks, comment markers and indentation read as one space.
	joined := regexp.MustCompile(`\s*\n\s*(//)?\s*`)
	for _, file := range []string{"config.go", "README.md", "docs/core.md"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := joined.ReplaceAllString(string(b), " ")
		for name, re := range figures {
			if !re.MatchString(text) {
				t.Errorf("%s does not state %s as the code has it (want a match for %q)", file, name, re)
			}
		}
	}
}

// docs/from-pgxpool.md gives the stretched window as a duration: shoalpgx's
// default BargeWindow (4ms) times maxStretch, past crowdPerConn waiters per
// connection.
func TestBargingFiguresInFromPgxpool(t *testing.T) {
	b, err := os.ReadFile("docs/from-pgxpool.md")
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`\s*\n\s*`).ReplaceAllString(string(b), " ")
	m := regexp.MustCompile(`BargeWindow\x60, (\d+)ms \(up to (\d+)ms when more than (\d+) callers wait per connection\)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("docs/from-pgxpool.md no longer states the window as \"`BargeWindow`, Nms (up to Mms when more than K callers wait per connection)\"")
	}
	window, _ := strconv.Atoi(m[1])
	if stretched, _ := strconv.Atoi(m[2]); stretched != window*maxStretch {
		t.Errorf("from-pgxpool.md: up to %dms, want %dms (%dms times %d)", stretched, window*maxStretch, window, maxStretch)
	}
	if crowd, _ := strconv.Atoi(m[3]); crowd != crowdPerConn {
		t.Errorf("from-pgxpool.md: more than %d callers per connection, want %d", crowd, crowdPerConn)
	}
}
