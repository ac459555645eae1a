package shoalhttp

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// When the server hangs up with many requests in flight on a connection
// (enough that their writes go through the batching writer), every request
// ends, none hangs, and the next request is served on a new connection.
// MinConns -1 keeps one connection; once in about 60 runs a second one was
// dialled for the crowd (an acquire waited), which does not change what is
// tested.
func TestHTTP2ServerHangsUpWithManyInFlight(t *testing.T) {
	const inFlight = 40
	started := make(chan struct{}, inFlight)
	hold := make(chan struct{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			started <- struct{}{}
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}
		io.WriteString(w, "ok")
	})
	srv := startH2C(t, handler)
	t.Cleanup(func() { close(hold) }) // runs before the server stops

	tr := newTestTransport(t, Options{H2CPriorKnowledge: true, MinConns: -1})
	client := &http.Client{Transport: tr}
	url := srv.url()
	if code, body := get(t, tr, url+"/"); code != 200 || body != "ok" {
		t.Fatalf("first request: %d %q", code, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := make(chan error, inFlight)
	for range inFlight {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/hold", nil)
			resp, err := client.Do(req)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			errs <- err
		}()
	}
	for range inFlight {
		select {
		case <-started:
		case <-ctx.Done():
			t.Fatal("the requests never all reached the server")
		}
	}
	if _, st := onlyStats(t, tr); st.Leases != inFlight || st.TotalConns > 2 {
		t.Fatalf("want all %d requests in flight on one or two connections, Stats %+v", inFlight, st)
	}
	srv.hangUp() // mid-request
	for i := range inFlight {
		select {
		case err := <-errs:
			if err == nil {
				t.Errorf("request %d succeeded although the server hung up before answering", i)
			}
		case <-ctx.Done():
			t.Fatalf("%d of %d requests still hang after the server hung up", inFlight-i, inFlight)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the requests ended only with their context")
	}
	if code, body := get(t, tr, url+"/"); code != 200 || body != "ok" {
		t.Fatalf("after the hang-up: %d %q", code, body)
	}
	eventually(t, "the dead connection to leave the pool", func() bool {
		_, st := onlyStats(t, tr)
		return st.TotalConns == 1 && st.Leases == 0
	})
}
