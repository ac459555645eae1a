package main

import (
	"strings"
	"testing"
	"time"
)

// The readers' table is there when readers ran, with a row per run, and
// absent when none did; an answer the pair's roles rule out is noted.
func TestMarkdownReads(t *testing.T) {
	o := &outcome{fault: silent, contender: "shoalpgx"}
	r := result{o: o, rf: readFigures{
		before:     phaseReads{answered: 10, byStandby: 9},
		after:      phaseReads{answered: 4, failed: 1},
		unexpected: 1,
	}}
	s := spec{workers: 1, duration: 10 * time.Second, faultAt: 3 * time.Second, deadline: time.Second, readers: 2, readPause: time.Millisecond}
	md := markdown("cmd", "machine", s, []result{r})
	for _, want := range []string{
		"#### Reads through the failover",
		"| silent | shoalpgx | 10 | 90.0% | 0 | n/a | 4 | 0.0% | 100.0% | 0 / 0 / 1 |",
		"1 reads were answered by a server in a role the pair did not have then",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	s.readers = 0
	if md := markdown("cmd", "machine", s, []result{r}); strings.Contains(md, "Reads through the failover") || !strings.Contains(md, "-readers 0") {
		t.Errorf("with no readers the report has a readers' table or does not say none ran:\n%s", md)
	}
}
