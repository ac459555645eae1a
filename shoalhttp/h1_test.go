package shoalhttp

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestHTTP1BodyReadToEndReusesConnection(t *testing.T) {
	srv, conns := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello "+r.URL.Path)
	}))
	tr := newTestTransport(t, Options{})
	for i := range 10 {
		code, body := get(t, tr, srv.URL+"/x")
		if code != 200 || body != "hello /x" {
			t.Fatalf("request %d: %d %q", i, code, body)
		}
	}
	if n := conns.n.Load(); n != 1 {
		t.Errorf("server saw %d connections, want 1", n)
	}
	key, st := onlyStats(t, tr)
	if want := "http://" + srv.Listener.Addr().String(); key != want {
		t.Errorf("Stats key %q, want %q", key, want)
	}
	if st.TotalConns != 1 || st.IdleConns != 1 || st.Leases != 0 {
		t.Errorf("stats after 10 requests: %+v", st)
	}
}

func TestHTTP1BodyAbandonedClosesConnection(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	srv, conns := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, big)
	}))
	tr := newTestTransport(t, Options{})
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := resp.Body.Read(buf); err == nil {
		t.Error("Read after Close succeeded")
	}
	// The close runs in the background (the core never closes on the
	// caller's goroutine).
	eventually(t, "the abandoned connection closed", func() bool {
		_, st := onlyStats(t, tr)
		return st.Closing == 0 && st.Closed == 1
	})
	_, st := onlyStats(t, tr)
	if st.TotalConns != 0 || st.Closed != 1 {
		t.Errorf("after abandoning a body: %+v, want the connection closed", st)
	}
	code, body := get(t, tr, srv.URL)
	if code != 200 || len(body) != len(big) {
		t.Fatalf("second request: %d, %d bytes", code, len(body))
	}
	if n := conns.n.Load(); n != 2 {
		t.Errorf("server saw %d connections, want 2", n)
	}
}

func TestHTTP1ConnectionCloseHeader(t *testing.T) {
	srv, conns := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "bye")
	}))
	tr := newTestTransport(t, Options{})
	for range 3 {
		if code, body := get(t, tr, srv.URL); code != 200 || body != "bye" {
			t.Fatalf("%d %q", code, body)
		}
		if _, st := onlyStats(t, tr); st.TotalConns != 0 {
			t.Fatalf("connection kept after Connection: close: %+v", st)
		}
	}
	if n := conns.n.Load(); n != 3 {
		t.Errorf("server saw %d connections, want 3", n)
	}
}

func TestHTTP1NoBodyResponsesReleaseAtOnce(t *testing.T) {
	srv, conns := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	tr := newTestTransport(t, Options{MaxConns: 1})
	client := &http.Client{Transport: tr}
	for range 5 {
		resp, err := client.Head(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		// The body is not even closed: with nothing to read, the
		// connection went back at once, or MaxConns 1 would deadlock.
		_ = resp
		resp, err = client.Post(srv.URL, "text/plain", strings.NewReader("p"))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	if n := conns.n.Load(); n != 1 {
		t.Errorf("server saw %d connections, want 1", n)
	}
}

func TestHTTP1TransparentGzip(t *testing.T) {
	srv, conns := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "gzip" {
			io.WriteString(w, "plain")
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, strings.Repeat("zipped ", 100))
		zw.Close()
	}))
	tr := newTestTransport(t, Options{})
	for range 3 {
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != strings.Repeat("zipped ", 100) || !resp.Uncompressed {
			t.Fatalf("body %q err %v uncompressed %v", b, err, resp.Uncompressed)
		}
	}
	if n := conns.n.Load(); n != 1 {
		t.Errorf("server saw %d connections, want 1 (gzip bodies must give the connection back)", n)
	}
	// With compression disabled the caller gets what it asked for.
	tr2 := newTestTransport(t, Options{DisableCompression: true})
	if _, body := get(t, tr2, srv.URL); body != "plain" {
		t.Errorf("DisableCompression: body %q", body)
	}
}

func TestHTTP1InformationalResponsesAndRequestClose(t *testing.T) {
	srv, conns := newH1Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints) // a 1xx before the real answer
		io.WriteString(w, "final")
	}))
	tr := newTestTransport(t, Options{})
	if code, body := get(t, tr, srv.URL); code != 200 || body != "final" {
		t.Fatalf("after 103 Early Hints: %d %q", code, body)
	}
	// A request that asks to close its connection closes it.
	req := mustRequest(t, srv.URL)
	req.Close = true
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	if _, st := onlyStats(t, tr); st.TotalConns != 0 {
		t.Errorf("connection kept after Request.Close: %+v", st)
	}
	if code, _ := get(t, tr, srv.URL); code != 200 {
		t.Fatal(code)
	}
	if n := conns.n.Load(); n != 2 {
		t.Errorf("server saw %d connections, want 2", n)
	}
}
