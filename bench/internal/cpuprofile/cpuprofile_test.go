package cpuprofile

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestStartWritesAProfileThatStopEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := Start(path)
	if err != nil {
		t.Fatal(err)
	}
	// A second profile cannot start while one runs.
	if _, err := Start(filepath.Join(t.TempDir(), "again.pprof")); err == nil {
		t.Error("a second Start while the first ran succeeded")
	}
	stop()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A profile is gzipped protobuf, and complete only once stopped.
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("the profile is not gzipped: %v", err)
	}
	if b, err := io.ReadAll(z); err != nil || len(b) == 0 {
		t.Fatalf("the profile holds %d bytes (%v), want a whole one", len(b), err)
	}
}

func TestStartNamesAFileItCannotCreate(t *testing.T) {
	if _, err := Start(filepath.Join(t.TempDir(), "missing", "cpu.pprof")); err == nil {
		t.Fatal("Start into a missing directory succeeded")
	}
}
