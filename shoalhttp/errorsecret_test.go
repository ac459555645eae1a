package shoalhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestErrorsNameNeitherPathNorQuery: whatever ends a request, over HTTP/1.1
// and HTTP/2, its error names the method and the origin, and never the
// path, the query, the URL's userinfo or a header's value (the package doc,
// docs/operating.md): each may carry a credential. The body's read errors
// too.
func TestErrorsNameNeitherPathNorQuery(t *testing.T) {
	release := make(chan struct{})
	defer close(release) // before the servers' Close, which waits for the handlers
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.URL.Query().Get("fault") {
		case "abort": // no answer: HTTP/1.1 hangs up, HTTP/2 resets the stream
			panic(http.ErrAbortHandler)
		case "head": // a head past MaxResponseHeaderBytes
			w.Header().Set("X-Big", strings.Repeat("x", 8<<10))
			w.WriteHeader(http.StatusOK)
		case "slow": // no answer before the caller's deadline
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "body": // a body cut short
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
	})
	for _, h2 := range []bool{false, true} {
		proto := map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2]
		srv, _, tlsCfg := newTLSServer(t, h, h2)
		tr := newTestTransport(t, Options{TLSClientConfig: tlsCfg, MaxResponseHeaderBytes: 4 << 10})
		host := strings.TrimPrefix(srv.URL, "https://")
		for _, fault := range []string{"abort", "head", "slow", "body"} {
			t.Run(proto+"/"+fault, func(t *testing.T) {
				url := "https://user-secret:pw-secret@" + host + "/charge/path-secret?fault=" + fault + "&token=query-secret"
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				if fault == "slow" {
					ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
				}
				defer cancel()
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader("payload"))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("X-Api-Key", "header-secret")
				resp, err := tr.RoundTrip(req)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
					if fault != "body" {
						t.Fatalf("RoundTrip succeeded (%s), want the fault %q to fail it", resp.Status, fault)
					}
				}
				if err == nil {
					t.Fatal("reading a body cut short succeeded")
				}
				if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "/charge") {
					t.Errorf("the error shows the path, the query, the userinfo or a header: %q", err)
				}
				if want := "shoalhttp: POST " + srv.URL + ": "; fault != "body" && !strings.HasPrefix(err.Error(), want) {
					t.Errorf("the error %q does not begin %q: the method and the origin", err, want)
				}
				if fault == "slow" && !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("the deadline's error %q does not match context.DeadlineExceeded", err)
				}
			})
		}
	}
}
