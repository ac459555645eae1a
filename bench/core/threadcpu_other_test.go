//go:build !linux

package core

import "time"

// threadCPU is only available on Linux.
func threadCPU() (time.Duration, bool) { return 0, false }
