package shoalgrpc

import (
	"context"
	"errors"
	"time"

	"github.com/shoalpool/shoal"
)

// readyWaitError is the error of a grpc.WaitForReady call whose context
// ended while it waited for the server to come back. It is the pool's last
// error (a refusal for a failed dial, or the context's end at the next try)
// with the context's error for its cause and the whole wait for its length,
// so that it names the pool and says what the call waited for as every
// other acquire error does, and the failed dial follows it.
func readyWaitError(ctx context.Context, last error, waited time.Duration) error {
	out := shoal.AcquireError{LastDial: last}
	var ae *shoal.AcquireError
	if errors.As(last, &ae) {
		out = *ae
		dial := ae.LastDial // the context's end names the last dial here
		if errors.Is(ae.Err, shoal.ErrDial) {
			dial = ae.Err
		}
		out.LastDial = dialCause(dial)
	}
	out.Err, out.Waited, out.Exhausted = ctx.Err(), waited, nil
	return &out
}

// dialCause returns the dial's own error inside err, a failure marked
// shoal.ErrDial, since the message puts "last dial failed" before it.
func dialCause(err error) error {
	if multi, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range multi.Unwrap() {
			if e != shoal.ErrDial {
				return e
			}
		}
	}
	return err
}
