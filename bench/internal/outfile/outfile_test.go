package outfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteCreatesMissingDirectories(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results", "deeper", "pgx.md")
	if err := Write(path, []byte("### pgx\n")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "### pgx\n" {
		t.Fatalf("read back %q, %v", got, err)
	}
	if err := Write(path, []byte("again\n")); err != nil {
		t.Fatalf("overwriting: %v", err)
	}
}

func TestWriteNamesWhatFailed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(filepath.Join(file, "pgx.md"), []byte("x"))
	if err == nil {
		t.Fatal("writing under a regular file succeeded")
	}
	t.Log(err)
}
