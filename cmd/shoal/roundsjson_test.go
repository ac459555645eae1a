package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// TestJSONSaysHowManyRoundsARowSums: each row of --json has the rounds
// its figures come from, as the CSV's rounds column does, so that a
// reader need not count round_ips: 3 for a row merged from three rounds
// (round_ips has 3), 1 for one run and for a case that failed, none for a
// case that was skipped.
func TestJSONSaysHowManyRoundsARowSums(t *testing.T) {
	s := benchrun.Settings{Duration: 20 * time.Millisecond, SetupTimeout: time.Second, OpTimeout: time.Second}
	ok := benchrun.Case{Name: "ok", Setup: func(context.Context) (*benchrun.Instance, error) {
		return &benchrun.Instance{Op: func(context.Context) (time.Duration, error) { return 0, nil }}, nil
	}}
	failing := benchrun.Case{Name: "failing", Setup: func(context.Context) (*benchrun.Instance, error) {
		return nil, errors.New("refused")
	}}
	skipped := benchrun.Case{Name: "skipped", Skip: "does not fit"}
	run := func(c benchrun.Case) benchrun.Result { return benchrun.RunCase(context.Background(), c, 2, s) }

	merged := mergeRounds([]benchrun.Result{run(ok), run(ok), run(ok)})
	merged.Name = "merged"
	results := []benchrun.Result{merged, run(ok), mergeRounds([]benchrun.Result{run(ok), run(failing)}), run(skipped)}
	want := map[string]string{"merged": "3", "ok": "1", "failing": "1", "skipped": ""}
	rep := &benchrun.Report{Command: "bench", Rounds: 3, Scenarios: []benchrun.ScenarioResult{{Name: "churn",
		Groups: []benchrun.GroupResult{{Title: "2 workers", Workers: 2, Results: results}}}}}

	var js, cs bytes.Buffer
	if err := benchrun.WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if err := benchrun.WriteCSV(&cs, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Scenarios []struct {
			Groups []struct {
				Results []map[string]any `json:"results"`
			} `json:"groups"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	nameCol, roundsCol := slices.Index(rows[0], "name"), slices.Index(rows[0], "rounds")
	csvRounds := map[string]string{}
	for _, row := range rows[1:] {
		csvRounds[row[nameCol]] = row[roundsCol]
	}
	for _, res := range doc.Scenarios[0].Groups[0].Results {
		name := res["name"].(string)
		got := ""
		if v, present := res["rounds"]; present {
			got = fmt.Sprint(v)
		}
		if got != want[name] || got != csvRounds[name] {
			t.Errorf("%s: JSON rounds %q, CSV rounds %q, want %q", name, got, csvRounds[name], want[name])
		}
		if ips, _ := res["round_ips"].([]any); name == "merged" && len(ips) != 3 {
			t.Errorf("merged: %d round_ips, want 3", len(ips))
		}
	}
}
