// Package warmup opens a pool's connections before a benchmark's timing
// starts, so that no round pays for dials the others did not.
package warmup

import "context"

// Hold takes n connections at once, each from acquire, which returns the
// function that gives its connection back, then gives them all back. A
// pool that holds n at once has opened n (and has pinged each, where it
// pings a connection it hands out). It stops at acquire's first error.
func Hold(ctx context.Context, n int, acquire func(context.Context) (release func(), err error)) error {
	var releases []func()
	defer func() {
		for _, r := range releases {
			r()
		}
	}()
	for range n {
		release, err := acquire(ctx)
		if release != nil {
			releases = append(releases, release)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
