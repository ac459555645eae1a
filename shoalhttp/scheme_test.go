package shoalhttp

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestOtherSchemesAreRefused guards http.md's "not supported: URLs other
// than http and https": such a request fails at once with an error naming
// the scheme (not the URL's password or query), dials nothing and makes no
// origin's pool.
func TestOtherSchemesAreRefused(t *testing.T) {
	tr := newTestTransport(t, Options{})
	for _, raw := range []string{"ftp://user:hunter2@127.0.0.1:21/f?password=hunter2", "ws://127.0.0.1:80/", "file:///etc/passwd"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		scheme, _, _ := strings.Cut(raw, ":")
		resp, err := tr.RoundTrip(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			t.Fatalf("%s: a response, want the scheme refused", scheme)
		}
		if !strings.Contains(err.Error(), `unsupported protocol scheme "`+scheme+`"`) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: %q, want it to name the scheme and not the password", scheme, err)
		}
	}
	if st := tr.Stats(); len(st) != 0 {
		t.Errorf("refused requests made pools: %v", st)
	}
}
