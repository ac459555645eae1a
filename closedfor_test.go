package shoal

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// stallFirstClose is an Observer whose ObserveClose, for the pool's first
// close, says so and waits to be let go. With no OnDisconnect and no
// Config.Close the pool tells it on the goroutine that let the connection
// go, so a pass that lets several go (Reset, Close, a reap, a shrink)
// stops after its first, with the others out of the pool or not.
type stallFirstClose struct {
	BaseObserver
	once    sync.Once
	entered chan Reason
	release chan struct{}
}

func (o *stallFirstClose) ObserveClose(r Reason) {
	first := false
	o.once.Do(func() { first = true })
	if first {
		o.entered <- r
		<-o.release
	}
}

// accounted returns the connections a snapshot accounts for: open, or
// counted as let go for some reason.
func accounted(s Stats) int64 {
	n := int64(s.TotalConns)
	for r := range len(reasonNames) {
		n += s.ClosedFor(Reason(r))
	}
	return n
}

// Every connection opened is, in any snapshot, either open (TotalConns) or
// counted by why it went (ClosedFor), in both modes and whichever way it
// goes: shoalpgx's Stat derives pgxpool's destroy counts from the two. A
// pass that lets several connections go is caught after its first close,
// with the others out of the pool already or still in it.
func TestStatsClosedForAccountsForEveryConnection(t *testing.T) {
	const opened = 3
	cases := []struct {
		name   string
		cfg    func(*Config[int])
		act    func(p *Pool[int]) // runs on a goroutine of its own; may block until the close is let go
		reason Reason
	}{
		{"Reset", nil, func(p *Pool[int]) { p.Reset() }, ReasonReset},
		{"Close", nil, func(p *Pool[int]) { _ = p.Close(context.Background()) }, ReasonPoolClosed},
		{"idle", func(c *Config[int]) { c.MaxIdleTime = time.Second }, nil, ReasonIdle},
		{"lifetime", func(c *Config[int]) { c.MaxLifetime = time.Second }, nil, ReasonLifetime},
		{"shrink", nil, func(p *Pool[int]) { _ = p.SetMaxConns(1) }, ReasonResized},
	}
	for _, streams := range []int{1, 2} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("streams=%d/%s", streams, tc.name), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					obs := &stallFirstClose{entered: make(chan Reason), release: make(chan struct{})}
					next := 0
					cfg := Config[int]{
						MaxConns:   opened,
						MaxStreams: streams,
						Observer:   obs,
						Dial: func(context.Context) (int, error) {
							next++
							return next, nil
						},
					}
					if tc.cfg != nil {
						tc.cfg(&cfg)
					}
					p, err := New(cfg)
					if err != nil {
						t.Fatal(err)
					}
					defer func() {
						if err := p.Close(context.Background()); err != nil {
							t.Error(err)
						}
					}()
					var leases []Lease[int]
					for range opened * streams {
						l, err := p.Acquire(context.Background())
						if err != nil {
							t.Fatal(err)
						}
						leases = append(leases, l)
					}
					for _, l := range leases {
						l.Release()
					}
					if s := p.Stats(); s.TotalConns != opened {
						t.Fatalf("%d connections open, want %d", s.TotalConns, opened)
					}
					done := make(chan struct{})
					go func() {
						defer close(done)
						if tc.act != nil {
							tc.act(p)
						}
					}()
					if r := <-obs.entered; r != tc.reason {
						t.Errorf("first close for %v, want %v", r, tc.reason)
					}
					s := p.Stats()
					close(obs.release)
					<-done
					if n := accounted(s); n != opened {
						t.Errorf("while the first close runs: %d open, %d closed for %v, %d accounted for; want all %d",
							s.TotalConns, s.ClosedFor(tc.reason), tc.reason, n, opened)
					}
					synctest.Wait()
					if s := p.Stats(); accounted(s) != opened || int64(s.TotalConns)+s.Closed != opened {
						t.Errorf("once settled: %d open, %d closed for %v, %d closed; want %d in all, each counted once",
							s.TotalConns, s.ClosedFor(tc.reason), tc.reason, s.Closed, opened)
					}
				})
			})
		}
	}
}
