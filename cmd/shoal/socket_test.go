package main

import (
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestPostgresHostAsParameterOrSocket guards the connection strings that
// name their host outside the URL's authority, which shoalpgx accepts: a
// host query parameter, and a Unix socket directory.
func TestPostgresHostAsParameterOrSocket(t *testing.T) {
	raw := os.Getenv("SHOAL_TEST_POSTGRES")
	if raw == "" {
		skipOrFail(t, "SHOAL_TEST_POSTGRES not set (. scripts/test-env.sh)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	db := strings.TrimPrefix(u.Path, "/")
	dir := socketProxy(t, u.Host, u.Port())

	for _, target := range []string{
		"postgres://" + u.User.String() + "@/" + db + "?host=" + u.Hostname() + "&port=" + u.Port() + "&sslmode=disable",
		"host=" + dir + " port=" + u.Port() + " user=" + u.User.Username() + " dbname=" + db + " sslmode=disable password=" + pw,
	} {
		rep, _ := benchTarget(t, target, "--only", "churn", "--workers", "1")
		if got := strings.Join(measuredNames(t, rep), " "); !strings.Contains(got, "churn/shoalpgx_pool") {
			t.Errorf("%s: shoalpgx_pool not measured; measured: %s", rep.Target, got)
		}
	}
}

// socketProxy listens on the PostgreSQL socket for port in a new directory,
// which it returns, and relays each connection to addr until the test ends.
func socketProxy(t *testing.T, addr, port string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgsock") // short: a socket path is limited to about 100 bytes
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, ".s.PGSQL."+port))
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	track := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			track(c)
			track(s)
			wg.Go(func() { io.Copy(s, c); s.Close() })
			wg.Go(func() { io.Copy(c, s); c.Close() })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
		os.RemoveAll(dir)
	})
	return dir
}
