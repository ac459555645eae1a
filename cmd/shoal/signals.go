package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// stillClosingAfter is how long after Ctrl-C shoal waits, quietly, for
// its connections to close before it says it is still at it: against a
// server that answers, closing takes milliseconds; against one that hangs,
// pgx gives each connection seconds.
const stillClosingAfter = time.Second

// interruptContext returns a context that ends at the first Ctrl-C (or
// SIGTERM), so that the run stops and prints what finished. A second one
// quits at once with status 130, without waiting for the connections to
// close: a user who presses Ctrl-C again is told, once closing has taken
// stillClosingAfter, that this is what it does. stop releases the
// signals.
func interruptContext(stderr io.Writer, exit func(int)) (ctx context.Context, stop func()) {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
		case <-done:
			return
		}
		cancel()
		note := time.NewTimer(stillClosingAfter)
		defer note.Stop()
		select {
		case <-note.C:
			fmt.Fprintln(stderr, "shoal: interrupted; still closing connections (Ctrl-C again to quit at once)")
			select {
			case <-sig:
			case <-done:
				return
			}
		case <-sig:
		case <-done:
			return
		}
		fmt.Fprintln(stderr, "shoal: interrupted again; quitting without closing connections")
		exit(exitInterrupted)
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel()
	}
}
