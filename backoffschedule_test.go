package shoal

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// The retry schedule docs/operating.md promises for a server that is down:
// 10ms after the first failed dial, doubling to 200ms apart; for a refusal
// no retry can mend (ErrPermanent), 1s doubling to 10s. MinConns keeps the
// pool asking, so every gap between two dials is the backoff itself.
func TestDialBackoffSchedule(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name string
		err  error
		run  time.Duration
		want []time.Duration
	}{
		{"refused", errors.New("connection refused"), 1200 * ms,
			[]time.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 200 * ms, 200 * ms, 200 * ms}},
		{"permanent", Permanent(errors.New("password authentication failed")), 40 * time.Second,
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var at []time.Time
				p, err := New(Config[*fakeConn]{
					MaxConns: 1, MinConns: 1, Logger: slog.New(slog.DiscardHandler),
					Dial: func(context.Context) (*fakeConn, error) {
						mu.Lock()
						at = append(at, time.Now())
						mu.Unlock()
						return nil, c.err
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(c.run)
				mu.Lock()
				var gaps []time.Duration
				for i := 1; i < len(at); i++ {
					gaps = append(gaps, at[i].Sub(at[i-1]))
				}
				mu.Unlock()
				_ = p.Close(context.Background())
				if len(gaps) < len(c.want) {
					t.Fatalf("gaps between dials %v, want them to begin %v", gaps, c.want)
				}
				for i, w := range c.want {
					if gaps[i] != w {
						t.Fatalf("gaps between dials %v, want them to begin %v", gaps[:len(c.want)], c.want)
					}
				}
			})
		})
	}
}
