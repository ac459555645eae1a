package shoalhttp

import (
	"io"
	"net/http"
	"testing"
)

// BenchmarkRoundTripHTTP1 compares the per-request cost of shoalhttp and a
// tuned http.Transport against an in-process HTTP/1.1 server, in parallel.
// The peer benchmarks against real servers are in bench/http.
func BenchmarkRoundTripHTTP1(b *testing.B) {
	srv, _ := newH1Server(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "0\n1\n2\n3\n4\n")
	}))
	tuned := http.DefaultTransport.(*http.Transport).Clone()
	tuned.MaxIdleConnsPerHost = 64
	defer tuned.CloseIdleConnections()
	sh, err := NewTransport(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer sh.Close(b.Context())
	for _, c := range []struct {
		name string
		rt   http.RoundTripper
	}{{"net-http-tuned", tuned}, {"shoalhttp", sh}} {
		b.Run(c.name, func(b *testing.B) {
			client := &http.Client{Transport: c.rt}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := client.Get(srv.URL)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		})
	}
}
