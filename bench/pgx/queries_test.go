package main

import (
	"strings"
	"testing"
)

// -queries keeps the set's order and its case-insensitive names, and names
// what it does not know.
func TestPickQueries(t *testing.T) {
	got, err := pickQueries(pipelineQueries, []string{"insert", " PK lookup"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].name != "pk lookup" || got[1].name != "insert" {
		t.Fatalf("picked %v, want pk lookup then insert", got)
	}
	_, err = pickQueries(pipelineQueries, []string{"select 2"})
	if err == nil || !strings.Contains(err.Error(), `"select 2"`) || !strings.Contains(err.Error(), "SELECT 1, pk lookup, insert") {
		t.Fatalf("an unknown query: %v", err)
	}
}
