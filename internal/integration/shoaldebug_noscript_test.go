package integration_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoaldebug"
)

// TestPageReloadsWithScriptsOff: docs/metrics.md says the page refreshes
// itself with scripts off too. Its script cannot run then, so the browser
// must load the whole page again, and again, and never ask for the
// fragment the script fetches.
func TestPageReloadsWithScriptsOff(t *testing.T) {
	exe := chromium(t)
	reg := shoaldebug.NewRegistry()
	unregister := reg.Register("orders", func() shoal.Stats { return shoal.Stats{Name: "orders", MaxConns: 4} })
	defer unregister()

	// Every whole-page request is noted on loads; the buffer holds more
	// than the test waits for, so the handler never blocks.
	loads := make(chan struct{}, 64)
	var fragments atomic.Int32
	page := reg.Handler()
	mux := http.NewServeMux()
	mux.Handle("/debug/shoal", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("fragment") == "1" {
			fragments.Add(1)
		} else {
			select {
			case loads <- struct{}{}:
			default:
			}
		}
		page.ServeHTTP(w, r)
	}))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // CI runs as root, where Chromium refuses its sandbox
		chromedp.DisableGPU,
	)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer acancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, tcancel := context.WithTimeout(ctx, 60*time.Second)
	defer tcancel()

	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/debug/shoal")); err != nil {
		t.Fatal(err)
	}
	// The first load and two reloads the browser made on its own.
	for i := range 3 {
		select {
		case <-loads:
		case <-ctx.Done():
			t.Fatalf("with scripts off the page was loaded %d times in 60s and never reloaded itself", i)
		}
	}
	if n := fragments.Load(); n != 0 {
		t.Errorf("the browser fetched the fragment %d times: its scripts were not off", n)
	}
	// The page says how often it refreshes: with scripts off, that is
	// the meta refresh's pace, not the script's.
	note, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`p.note`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(note, "every two seconds") {
		t.Errorf("with scripts off the page says %q, want it to say it refreshes every two seconds", note)
	}
}
