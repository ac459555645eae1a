package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fullDisk is a stdout whose every write fails, as on a full disk.
type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestTablesThatCannotBeWrittenFail: a run whose tables could not be
// written to stdout fails, saying why, as one whose --json or --csv could
// not be does, rather than ending with status 0 and its results lost.
func TestTablesThatCannotBeWrittenFail(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	runs := map[string]func(t *testing.T) []string{
		"bench": func(*testing.T) []string {
			return []string{"bench", "--target", srv.URL + "/", "--only", "churn", "--workers", "1", "--rounds", "1"}
		},
		"sweep": func(t *testing.T) []string {
			return []string{"sweep", "--target", postgresDSN(t), "--max-conns", "2", "--rounds", "2"}
		},
	}
	for name, args := range runs {
		t.Run(name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(context.Background(), append(args(t), testTimes...), fullDisk{}, &stderr)
			if code != exitFailed || !strings.Contains(stderr.String(), "no space left on device") {
				t.Errorf("exit status %d, want %d, and the write's error on stderr:\n%s", code, exitFailed, stderr.String())
			}
		})
	}
}
