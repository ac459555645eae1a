//go:build !linux

package shoalpgx

import "time"

// processCPU is measured on Linux only.
func processCPU() time.Duration { return 0 }
