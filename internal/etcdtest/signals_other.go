//go:build !unix

package etcdtest

import "os"

// Without job-control signals a member cannot be paused: Stop and Cont
// fail the test.
var sigStop, sigCont os.Signal
