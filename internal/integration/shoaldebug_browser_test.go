package integration_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/debugload"
	"github.com/shoalpool/shoal/shoaldebug"
)

// updateScreenshot writes the browser test's screenshot to
// docs/shoal-debug.png, the one the README shows.
var updateScreenshot = flag.Bool("update-screenshot", false, "write the page's screenshot to docs/shoal-debug.png")

// chromium finds the browser: SHOAL_CHROMIUM, else chromium on PATH. When
// there is none the test is skipped, unless SHOAL_REQUIRE_SERVICES=1 (CI,
// where scripts/services.sh installed it) makes that a failure.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SHOAL_CHROMIUM"); p != "" {
		return p
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("SHOAL_REQUIRE_SERVICES") == "1" {
		t.Fatal("no chromium on PATH nor SHOAL_CHROMIUM, and SHOAL_REQUIRE_SERVICES=1")
	}
	t.Skip("no chromium on PATH nor SHOAL_CHROMIUM")
	return ""
}

// TestPageInBrowser opens the page in headless Chromium while a pool is
// under load and reads what a person would read: some callers waiting,
// every connection in use, counts in the wait histogram, the leak's stack
// under the leaking function's name, no password, and numbers that move
// without a reload.
func TestPageInBrowser(t *testing.T) {
	exe := chromium(t)
	reg := shoaldebug.NewRegistry()
	lp := debugload.New(t, reg.NewObserver("orders via postgres://app:hunter2@db/orders"), leakyHandler)
	defer lp.Stop()
	mux := http.NewServeMux()
	mux.Handle("/debug/shoal", reg.Handler())
	srv := httptest.NewServer(mux)
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // CI runs as root, where Chromium refuses its sandbox
		chromedp.DisableGPU,
		chromedp.WindowSize(1100, 900),
	)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer acancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, tcancel := context.WithTimeout(ctx, 60*time.Second)
	defer tcancel()

	// The leak is reported after LeakThreshold; the page shows it at its
	// next refresh.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/debug/shoal"),
		chromedp.WaitVisible(chromedp.CSS(`[data-k=leakfunc]`)),
	); err != nil {
		t.Fatal(err)
	}
	// Each read is one script, run between two of the page's refreshes:
	// a refresh replaces the pools' HTML each second, and a read in
	// several steps (find the node, then its text) could meet it halfway.
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).innerText`, sel)))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return s
	}
	// One render is one Stats call, and a lease passing from a worker
	// that released it to one that waited is held by neither for an
	// instant: a render may show one connection less in use. Wait for
	// a refresh (each second) that shows them all, and read the four
	// numbers from that one render.
	nums, err := chromedp.Run(ctx, chromedp.Poll[[]string](`(() => {
		const v = k => document.querySelector("[data-k=" + k + "]").textContent.trim();
		return v("inuse") === v("max") && [v("waiting"), v("inuse"), v("max"), v("acquires")];
	})()`, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(15*time.Second)))
	if err != nil {
		t.Fatalf("no render in 15s showed every connection in use (the last: %s of %s): %v", text(`[data-k=inuse]`), text(`[data-k=max]`), err)
	}
	waiting, inUse, maxConns, acquires1 := nums[0], nums[1], nums[2], nums[3]
	body := text(`body`)
	// Every leak's function and stack: on a loaded machine a worker
	// descheduled while holding its lease can be reported too.
	leaks, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("details.leak")].map(e => e.querySelector("[data-k=leakfunc]").textContent + "\n" + e.querySelector("[data-k=leakstack]").textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	counts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("[data-k=waitcount]")].map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100 is PNG; below, JPEG
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Sleep(2500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	acquires2 := text(`[data-k=acquires]`)

	atoi := func(s string) int {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("%q is not a number", s)
		}
		return n
	}
	if atoi(waiting) == 0 {
		t.Errorf("waiting %s, want some: 12 workers share 4 connections", waiting)
	}
	if atoi(inUse) != atoi(maxConns) || atoi(maxConns) != debugload.MaxConns {
		t.Errorf("in use %s of max %s, want all %d", inUse, maxConns, debugload.MaxConns)
	}
	waited := 0
	for _, c := range counts[1:] { // counts[0] is "none", acquires that did not wait
		waited += atoi(c)
	}
	if len(counts) < 2 || waited == 0 {
		t.Errorf("histogram counts %v, want waits", counts)
	}
	if !slices.ContainsFunc(leaks, func(l string) bool {
		fn, stack, _ := strings.Cut(l, "\n")
		return strings.Contains(fn, "leakyHandler") && strings.Contains(stack, "integration_test.leakyHandler")
	}) {
		t.Errorf("no leak shown under leakyHandler's name with its stack:\n%s", strings.Join(leaks, "\n---\n"))
	}
	if strings.Contains(body, "hunter2") || !strings.Contains(body, "app:xxxxx@db") {
		t.Errorf("the name's password shows, or the name does not:\n%s", body)
	}
	if atoi(acquires2) <= atoi(acquires1) {
		t.Errorf("acquires %s then %s 2.5s later: the page does not refresh", acquires1, acquires2)
	}

	path := filepath.Join(t.TempDir(), "shoal-debug.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	if *updateScreenshot {
		// The stacks on the page name source files: built without
		// -trimpath they are this machine's absolute paths, which the
		// docs must not show.
		for _, l := range leaks {
			for _, line := range strings.Split(l, "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "/") {
					t.Fatalf("the page shows this machine's path %s: run go test -trimpath to update the screenshot", strings.TrimSpace(line))
				}
			}
		}
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "shoal-debug.png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// leakyHandler takes the lease the loaded pool never gives back: the leak
// the page must show under this function's name.
func leakyHandler(ctx context.Context, pool *shoal.Pool[int]) (shoal.Lease[int], error) {
	return pool.Acquire(ctx)
}
