package shoal_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/shoalpool/shoal"
)

// session stands for a connection to a server: a database session, say.
type session struct{ id int }

func (s *session) query(q string) string { return fmt.Sprintf("session %d ran %q", s.id, q) }

func Example() {
	next := 0
	pool, err := shoal.New(shoal.Config[*session]{
		Dial: func(ctx context.Context) (*session, error) {
			next++ // a real Dial would connect and authenticate here
			return &session{id: next}, nil
		},
		MaxConns: 8,
	})
	if err != nil {
		panic(err)
	}
	defer pool.Close(context.Background())

	ctx := context.Background()
	lease, err := pool.Acquire(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(lease.Value().query("SELECT 1"))
	lease.Release()

	// The next acquire reuses the idle session instead of dialling.
	lease, _ = pool.Acquire(ctx)
	fmt.Println(lease.Value().query("SELECT 2"))
	lease.Release()
	fmt.Println("dials:", pool.Stats().Dials)
	// Output:
	// session 1 ran "SELECT 1"
	// session 1 ran "SELECT 2"
	// dials: 1
}

func ExamplePool_Do() {
	errConnLost := errors.New("connection lost")
	pool, _ := shoal.New(shoal.Config[*session]{
		Dial:     func(ctx context.Context) (*session, error) { return &session{id: 1}, nil },
		MaxConns: 1,
		// Errors that leave the connection unusable: Do discards it.
		Broken: func(err error) bool { return errors.Is(err, errConnLost) },
	})
	defer pool.Close(context.Background())

	err := pool.Do(context.Background(), func(s *session) error {
		fmt.Println(s.query("UPDATE accounts SET ..."))
		return errConnLost
	})
	fmt.Println(err, "- connections open:", pool.Stats().TotalConns)
	// Output:
	// session 1 ran "UPDATE accounts SET ..."
	// connection lost - connections open: 0
}

// A multiplexed pool: each connection serves up to MaxStreams leases at
// once, and a second connection is dialled only when the first is full.
func ExampleConfig_multiplexed() {
	next := 0
	pool, _ := shoal.New(shoal.Config[*session]{
		Dial:       func(ctx context.Context) (*session, error) { next++; return &session{id: next}, nil },
		MaxConns:   4,
		MaxStreams: 2,
	})
	defer pool.Close(context.Background())

	ctx := context.Background()
	var leases []shoal.Lease[*session]
	for i := 0; i < 3; i++ {
		l, _ := pool.Acquire(ctx)
		leases = append(leases, l)
		fmt.Println("stream", i, "on session", l.Value().id)
	}
	s := pool.Stats()
	fmt.Printf("%d leases on %d connections\n", s.Leases, s.TotalConns)
	for _, l := range leases {
		l.Release()
	}
	// Output:
	// stream 0 on session 1
	// stream 1 on session 1
	// stream 2 on session 2
	// 3 leases on 2 connections
}

// MinConns keeps connections open even while every one is busy, so that a
// multiplexed pool has more than one to spread its leases over; Warm waits
// for them.
func ExampleConfig_minConns() {
	pool, _ := shoal.New(shoal.Config[*session]{
		Dial:       func(ctx context.Context) (*session, error) { return &session{}, nil },
		MaxConns:   4,
		MaxStreams: 100,
		MinConns:   2,
	})
	defer pool.Close(context.Background())
	if err := pool.Warm(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(pool.Stats().TotalConns, "connections open before any lease")

	var leases []shoal.Lease[*session]
	for range 4 {
		l, _ := pool.Acquire(context.Background())
		leases = append(leases, l)
	}
	s := pool.Stats()
	fmt.Printf("%d leases on %d connections\n", s.Leases, s.InUseConns)
	for _, l := range leases {
		l.Release()
	}
	// Output:
	// 2 connections open before any lease
	// 4 leases on 2 connections
}

// InitialMaxConns starts a pool below MaxConns, as a SetMaxConns made
// before it dials anything: the floor waits for the limit to rise, and
// comes back in full once SetMaxConns raises it.
func ExampleConfig_initialMaxConns() {
	pool, _ := shoal.New(shoal.Config[*session]{
		Dial:            func(ctx context.Context) (*session, error) { return &session{}, nil },
		MaxConns:        4,
		InitialMaxConns: 1,
		MaxStreams:      100,
		MinConns:        2,
	})
	defer pool.Close(context.Background())
	ctx := context.Background()
	_ = pool.Warm(ctx) // up to the floor, at most the limit
	s := pool.Stats()
	fmt.Printf("limit %d: %d open\n", s.MaxConns, s.TotalConns)

	_ = pool.SetMaxConns(4)
	_ = pool.Warm(ctx)
	s = pool.Stats()
	fmt.Printf("limit %d: %d open\n", s.MaxConns, s.TotalConns)
	// Output:
	// limit 1: 1 open
	// limit 4: 2 open
}

// An acquire that cannot be served says what it waited for.
func ExampleAcquireError() {
	pool, _ := shoal.New(shoal.Config[*session]{
		Dial:     func(ctx context.Context) (*session, error) { return &session{id: 1}, nil },
		MaxConns: 1,
	})
	defer pool.Close(context.Background())

	held, _ := pool.Acquire(context.Background())
	defer held.Release()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := pool.Acquire(ctx)
	var ae *shoal.AcquireError
	if errors.As(err, &ae) {
		fmt.Println(errors.Is(err, context.DeadlineExceeded), ae.MaxConns, ae.InUse, ae.Waiting)
	}
	// Output:
	// true 1 1 1
}

// New names the field that is wrong.
func ExampleNew_badConfig() {
	_, err := shoal.New(shoal.Config[net.Conn]{
		Dial:     func(ctx context.Context) (net.Conn, error) { return nil, nil },
		MaxConns: 4,
		MinIdle:  10,
	})
	fmt.Println(err)
	// Output:
	// shoal: Config.MinIdle must be <= MaxConns (4), got 10
}

// Lifetimes with jitter, idle reaping, warm-up and a health check: the
// lifecycle of a pool of TCP connections to a database.
func ExampleConfig_lifecycle() {
	var d net.Dialer
	cfg := shoal.Config[net.Conn]{
		Dial:             func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "tcp", "127.0.0.1:5432") },
		Close:            net.Conn.Close,
		MaxConns:         16,
		MinIdle:          2,                // kept open in the background
		MaxLifetime:      30 * time.Minute, // each connection lives 25 to 30 minutes,
		LifetimeJitter:   5 * time.Minute,  // so they do not all reconnect at once
		MaxIdleTime:      5 * time.Minute,
		HealthCheckAfter: time.Second,
		HealthCheck: func(ctx context.Context, c net.Conn) error {
			return nil // e.g. a protocol-level ping
		},
		DialTimeout: 5 * time.Second,
		MaxWaiters:  1000, // past that, Acquire fails at once with ErrExhausted
	}
	pool, err := shoal.New(cfg)
	fmt.Println("config ok:", err == nil)
	if err == nil {
		pool.Close(context.Background())
	}
	// Output:
	// config ok: true
}
