// Package outfile writes a benchmark's report where -out says, creating the
// directories on the way: bench/results/ is not committed, so a fresh
// checkout has none.
package outfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write writes data to path, creating path's directory if it is missing.
func Write(path string, data []byte) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating the directory for %s: %w", path, err)
		}
	}
	return os.WriteFile(path, data, 0o644)
}
