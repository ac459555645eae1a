package shoalhttp

import (
	"context"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"testing"
	"time"
)

// TestH2LimitLoweredToZeroAndClosedBeforeTheFirstRequest: a server that
// lowers a fresh connection's stream limit to 0 after the pool handed it
// out, and has it closed, all before the connection's first request
// reaches x/net: x/net fails that request as one that "could not be
// established" (it never opens a stream on a closed connection that has
// opened none), and the request goes to a new connection, since the server
// never saw it. Unlike TestH2LimitLoweredOnAFreshConnAfterFollowLimit,
// this order is not left to a race: GotConn holds the request back until
// x/net has closed the connection, which it does only after marking it
// closed. The deadline is only the failure's bound.
func TestH2LimitLoweredToZeroAndClosedBeforeTheFirstRequest(t *testing.T) {
	srv := startLowering(t, 100, 0, make(chan struct{}))
	srv.hangUpOnGoAway.Store(true)
	tr := newTestTransport(t, Options{
		H2CPriorKnowledge: true,
		MinConns:          -1, // one connection, so that the request takes the fresh one
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &closeSignalConn{Conn: nc, closed: make(chan struct{})}, nil
		},
	})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var cued atomic.Bool
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if !cued.CompareAndSwap(false, true) {
			return
		}
		srv.cue <- struct{}{}
		select {
		case <-info.Conn.(*closeSignalConn).closed:
		case <-ctx.Done():
			t.Error("x/net never closed the connection whose limit fell to 0")
		}
	}}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, srv.url+"/", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		_, st := onlyStats(t, tr)
		t.Fatalf("GET whose fresh connection fell to 0 streams and closed before its first request: %v; %+v", err, st)
	}
	resp.Body.Close()
	if n := srv.accepted.Load(); n != 2 {
		t.Errorf("server accepted %d connections, want 2 (the request moved to a new one)", n)
	}
}
