package shoalhttp

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestBodyReadErrorsNameNoSecret guards http.md's "an error reading a
// response's body (unexpected EOF, an HTTP/2 stream reset) comes from the
// body, as net/http's does, and names none of them": neither the path,
// the query string nor a header. Over HTTP/1.1 the server promises more
// bytes than it sends; over HTTP/2 it resets the stream mid-body.
func TestBodyReadErrorsNameNoSecret(t *testing.T) {
	cut := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "0123456789")
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // net/http closes the connection, or resets the stream
	})
	for _, h2 := range []bool{false, true} {
		name := map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2]
		t.Run(name, func(t *testing.T) {
			opts := Options{}
			url := ""
			if h2 {
				srv, _, tlsCfg := newH2TLSServer(t, cut, 0)
				url, opts.TLSClientConfig = srv.URL, tlsCfg
			} else {
				srv, _ := newH1Server(t, cut)
				url = srv.URL
			}
			tr := newTestTransport(t, opts)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/accounts/hunter2path?token=hunter2query", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer hunter2header")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			defer resp.Body.Close()
			if got := resp.ProtoMajor; got != map[bool]int{false: 1, true: 2}[h2] {
				t.Fatalf("the response came over HTTP/%d", got)
			}
			body, err := io.ReadAll(resp.Body)
			if err == nil {
				t.Fatalf("read %q to the end of a body cut short", body)
			}
			if !h2 && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("the body's error: %v, want io.ErrUnexpectedEOF as net/http's", err)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the body's error %q names the path, the query or a header", err)
			}
		})
	}
}
