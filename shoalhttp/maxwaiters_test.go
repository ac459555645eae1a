package shoalhttp

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// MaxWaiters bounds the requests waiting for a connection to one origin:
// past it RoundTrip fails at once with an error that matches
// shoal.ErrExhausted (Options.MaxWaiters, docs/settings.md), over HTTP/1.1
// and HTTP/2 alike. One request holds the origin's one connection (its
// HTTP/2 server allows one stream), one waits, and the third is refused.
func TestMaxWaitersRefusesAtOnce(t *testing.T) {
	for _, proto := range []string{"HTTP/1.1", "HTTP/2"} {
		t.Run(proto, func(t *testing.T) {
			release := make(chan struct{})
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				<-release // the body stays open: the connection (the stream) stays held
			})
			opts := Options{MaxConns: 1, MaxWaiters: 1}
			var url string
			if proto == "HTTP/1.1" {
				srv, _ := newH1Server(t, h)
				url = srv.URL
			} else {
				srv, _, tlsCfg := newH2TLSServer(t, h, 1)
				url, opts.TLSClientConfig = srv.URL, tlsCfg
			}
			defer close(release) // before the servers close (cleanups run after)
			tr := newTestTransport(t, opts)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			send := func(ctx context.Context) (*http.Response, error) {
				req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
				if err != nil {
					t.Fatal(err)
				}
				return tr.RoundTrip(req)
			}

			held, err := send(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer held.Body.Close()
			if held.ProtoMajor != map[string]int{"HTTP/1.1": 1, "HTTP/2": 2}[proto] {
				t.Fatalf("the response came over %s, want %s", held.Proto, proto)
			}
			waited := make(chan error, 1)
			go func() {
				resp, err := send(ctx)
				if err == nil {
					resp.Body.Close()
				}
				waited <- err
			}()
			eventually(t, "a request waiting for the connection", func() bool {
				_, st := onlyStats(t, tr)
				return st.Waiting == 1
			})

			// Its own deadline, short: a pool that let it wait would
			// fail it with the deadline's error, not ErrExhausted.
			short, cancelShort := context.WithTimeout(ctx, 5*time.Second)
			defer cancelShort()
			_, err = send(short)
			if !errors.Is(err, shoal.ErrExhausted) {
				t.Fatalf("a request past MaxWaiters 1: %v, want an error matching shoal.ErrExhausted", err)
			}
			if _, st := onlyStats(t, tr); st.RejectedAcquires != 1 || st.Waiting != 1 {
				t.Errorf("after the refusal: %d rejected, %d waiting; want 1 and the 1 still waiting", st.RejectedAcquires, st.Waiting)
			}
			cancel() // the waiter gives up; release lets the handlers end
			if err := <-waited; err == nil {
				t.Errorf("the waiting request succeeded with the connection still held")
			}
		})
	}
}
