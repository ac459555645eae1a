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

// A rejoin run adds the rejoin's timing and a table of the reads begun
// after it; a report without one has neither.
func TestMarkdownRejoin(t *testing.T) {
	sec := time.Second
	o := &outcome{fault: rejoin, contender: "pgxpool", promotedAt: 3300 * time.Millisecond, rejoinedAt: 7500 * time.Millisecond, length: 12500 * time.Millisecond}
	r := result{o: o, rf: readFigures{
		after:        phaseReads{answered: 8, byStandby: 2},
		rejoined:     phaseReads{answered: 4, byStandby: 3, failed: 2},
		firstStandby: 40 * time.Millisecond,
	}}
	s := spec{workers: 1, duration: 10 * sec, faultAt: 3 * sec, deadline: sec, readers: 2, readPause: time.Millisecond, afterRejoin: 5 * sec}
	md := markdown("cmd", "machine", s, []result{r})
	for _, want := range []string{
		"rejoin: as stopped",
		"| rejoin | pgxpool | 3300 ms | 4200 ms | 12500 ms |",
		"| rejoin | pgxpool | 0 | n/a | 0 | n/a | 8 | 25.0% | 75.0% | 0 / 0 / 0 |",
		"#### Reads after the old primary rejoined as a standby",
		"| rejoin | pgxpool | 4 | 75.0% | 25.0% | 40 ms | 2 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	o.fault = stopped
	md = markdown("cmd", "machine", s, []result{r})
	for _, absent := range []string{"rejoin: as stopped", "Rejoin took", "rejoined as a standby", "The rejoin case is the exception"} {
		if strings.Contains(md, absent) {
			t.Errorf("a report without a rejoin run has %q:\n%s", absent, md)
		}
	}
}
