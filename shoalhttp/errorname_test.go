package shoalhttp

import (
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestRoundTripErrorNamesThePool guards Options.Name in a request's own
// errors, as in the pool's logs and Stats: a server that hangs up without
// an answer fails the request with the pool's name and origin in the text.
func TestRoundTripErrorNamesThePool(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			c.Read(buf) // the request's head, then no answer
			c.Close()
		}
	}()
	for name, shown := range map[string]string{
		"payments": "payments",
		// A password in the name is masked, as the core masks a pool's.
		"payments password=hunter2": "payments password=xxxxx",
	} {
		tr := newTestTransport(t, Options{Name: name})
		url := "http://" + ln.Addr().String() + "/charge?token=secret"
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
			t.Fatal("RoundTrip to a server that hangs up succeeded")
		}
		want := "shoalhttp: GET " + shown + " http://" + ln.Addr().String() + ": "
		if !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("error = %q, want it to begin %q", err, want)
		}
		if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "/charge") || strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("error shows the request's path or query, or the name's password: %q", err)
		}
	}
}
