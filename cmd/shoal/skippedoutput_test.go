package main

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestSkippedScenarioInJSONAndCSV: a scenario that does not fit the
// target is in --json with its groups an empty list, not null, so that a
// script can loop over them, and in --csv as a row of its own with status
// skipped and the reason, so that the two outputs tell the same story.
func TestSkippedScenarioInJSONAndCSV(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	args := append([]string{"bench", "--target", srv.URL + "/", "--only", "churn,partitions", "--workers", "1"}, benchTimes...)

	r := runShoal(t, append(args, "--json")...)
	r.wantCode(t, exitOK)
	var doc struct {
		Scenarios []struct {
			Name    string `json:"name"`
			Skipped string `json:"skipped"`
			Groups  *[]any `json:"groups"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	jsonSkipped := ""
	for _, s := range doc.Scenarios {
		if s.Groups == nil {
			t.Errorf("JSON: scenario %s has groups null, want a list", s.Name)
		}
		if s.Name == "partitions" {
			jsonSkipped = s.Skipped
		}
	}
	if jsonSkipped == "" {
		t.Fatalf("JSON does not say partitions was skipped:\n%s", r.stdout)
	}

	r = runShoal(t, append(args, "--csv")...)
	r.wantCode(t, exitOK)
	rows, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	scenario, status, reason := slices.Index(rows[0], "scenario"), slices.Index(rows[0], "status"), slices.Index(rows[0], "reason")
	for _, row := range rows[1:] {
		if row[scenario] == "partitions" {
			if row[status] != "skipped" || row[reason] != jsonSkipped {
				t.Errorf("CSV: partitions row has status %q, reason %q; want skipped, %q", row[status], row[reason], jsonSkipped)
			}
			return
		}
	}
	t.Errorf("CSV has no row for the skipped scenario partitions (JSON says %q):\n%s", jsonSkipped, r.stdout)
}
