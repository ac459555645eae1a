package shoalhttp

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// connEvents counts the connections a test server opened and closed.
type connEvents struct{ opened, closed atomic.Int64 }

func (e *connEvents) hook(_ net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		e.opened.Add(1)
	case http.StateClosed, http.StateHijacked:
		e.closed.Add(1)
	}
}

func newEventServer(t *testing.T) (*httptest.Server, *connEvents) {
	t.Helper()
	ev := &connEvents{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = ev.hook
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, ev
}

// Past MaxLifetime a connection is not used again: the next request opens
// a new one, and the old one is closed.
func TestMaxLifetimeReplacesConnection(t *testing.T) {
	srv, ev := newEventServer(t)
	tr := newTestTransport(t, Options{MaxLifetime: 100 * time.Millisecond, LifetimeJitter: -1, MaxIdleTime: -1})
	if code, _ := get(t, tr, srv.URL); code != 200 {
		t.Fatalf("status %d", code)
	}
	if code, _ := get(t, tr, srv.URL); code != 200 || ev.opened.Load() != 1 {
		t.Fatalf("a second request within the lifetime: status %d, %d connections, want 1", code, ev.opened.Load())
	}
	time.Sleep(200 * time.Millisecond)
	if code, _ := get(t, tr, srv.URL); code != 200 {
		t.Fatalf("status %d", code)
	}
	if n := ev.opened.Load(); n != 2 {
		t.Fatalf("after the lifetime: %d connections opened, want 2", n)
	}
	eventually(t, "the aged connection closed", func() bool { return ev.closed.Load() >= 1 })
	_, st := onlyStats(t, tr)
	if st.TotalConns != 1 {
		t.Errorf("stats %+v: want the one new connection open", st)
	}
}

// A connection idle for MaxIdleTime is closed in the background, down to
// MinIdle (0 here).
func TestMaxIdleTimeClosesIdleConnection(t *testing.T) {
	srv, ev := newEventServer(t)
	tr := newTestTransport(t, Options{MaxIdleTime: 100 * time.Millisecond})
	if code, _ := get(t, tr, srv.URL); code != 200 {
		t.Fatalf("status %d", code)
	}
	eventually(t, "the idle connection closed", func() bool {
		_, st := onlyStats(t, tr)
		return st.TotalConns == 0 && ev.closed.Load() == 1
	})
	if code, _ := get(t, tr, srv.URL); code != 200 || ev.opened.Load() != 2 {
		t.Fatalf("after the idle close: status %d, %d connections opened, want 2", code, ev.opened.Load())
	}
}
