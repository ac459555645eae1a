package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// cleanups are what must happen however the program ends: the throwaway
// server's directory removed.
var cleanups struct {
	sync.Mutex
	next int
	fns  map[int]func()
}

// addCleanup registers fn and returns a function that runs it once and
// unregisters it.
func addCleanup(fn func()) func() {
	cleanups.Lock()
	defer cleanups.Unlock()
	if cleanups.fns == nil {
		cleanups.fns = make(map[int]func())
	}
	id := cleanups.next
	cleanups.next++
	var once sync.Once
	cleanups.fns[id] = func() { once.Do(fn) }
	return func() {
		cleanups.Lock()
		f := cleanups.fns[id]
		delete(cleanups.fns, id)
		cleanups.Unlock()
		if f != nil {
			f()
		}
	}
}

// runCleanups runs every registered cleanup.
func runCleanups() {
	cleanups.Lock()
	fns := cleanups.fns
	cleanups.fns = nil
	cleanups.Unlock()
	for _, f := range fns {
		f()
	}
}

// onSignal runs fn and exits when the program is interrupted or
// terminated; the returned function stops watching.
func onSignal(fn func()) func() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			fmt.Fprintf(os.Stderr, "outage: %v: removing the throwaway server\n", s)
			// Bounded: the main goroutine may be stopping the server
			// too. Past the bound the kernel still stops the server as
			// this process exits (serverAttr); only its directory stays.
			within(10*time.Second, fn)
			os.Exit(1)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
	}
}
