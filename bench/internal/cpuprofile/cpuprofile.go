// Package cpuprofile writes a benchmark's CPU profile to a file, for the
// programs' -cpuprofile flags.
package cpuprofile

import (
	"os"
	"runtime/pprof"
)

// Start creates path and starts the CPU profile into it. The function it
// returns stops the profile and closes the file; call it before the
// program exits, or the profile is cut short.
func Start(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
