package shoaldebug_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/debugload"
	"github.com/shoalpool/shoal/shoaldebug"
)

// get fetches the page with the given Accept header and query.
func get(t *testing.T, srv *httptest.Server, query, accept string) (string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/debug/shoal"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Get("Content-Type"), string(body)
}

// TestJSONUnderLoad reads the page's JSON, asked for both ways, while a
// pool is loaded, and checks what a script would check.
func TestJSONUnderLoad(t *testing.T) {
	reg := shoaldebug.NewRegistry()
	lp := debugload.New(t, reg.NewObserver("orders"), leakyHandler)
	defer lp.Stop()
	srv := httptest.NewServer(reg.Handler())
	defer srv.Close()
	waitFor(t, func() bool { return lp.Pool.Stats().Leaked > 0 })

	for _, ask := range []struct{ query, accept string }{{"?format=json", ""}, {"", "application/json"}} {
		ct, body := get(t, srv, ask.query, ask.accept)
		if !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("%+v: Content-Type %q", ask, ct)
		}
		var page shoaldebug.Page
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatalf("%+v: %v\n%s", ask, err, body)
		}
		if len(page.Pools) != 1 {
			t.Fatalf("%+v: %d pools", ask, len(page.Pools))
		}
		p := page.Pools[0]
		var waited int64
		for _, b := range p.Waits[1:] {
			waited += b.Count
		}
		switch {
		case p.Name != "orders" || !p.Observed:
			t.Errorf("pool %q observed %v", p.Name, p.Observed)
		case p.Stats.MaxConns != debugload.MaxConns || p.Stats.Acquires == 0:
			t.Errorf("stats %+v", p.Stats)
		case waited == 0:
			t.Errorf("no acquire waited: %+v", p.Waits)
		case !slices.ContainsFunc(p.Leaks, func(l shoaldebug.Leak) bool {
			// Not Leaks[0]: on a loaded machine a worker descheduled while
			// holding its lease can be reported after leakyHandler.
			return strings.Contains(l.Function, "leakyHandler") && strings.Contains(l.Stack, "shoaldebug_test.leakyHandler")
		}):
			t.Errorf("no leak by leakyHandler: %+v", p.Leaks)
		case p.LastDialError == nil || !strings.Contains(p.LastDialError.Error, "connection refused"):
			t.Errorf("last dial error %+v", p.LastDialError)
		}
	}
	if ct, body := get(t, srv, "", "text/html,application/xhtml+xml,*/*;q=0.8"); !strings.HasPrefix(ct, "text/html") || !strings.Contains(body, "<script>") {
		t.Errorf("a browser's Accept got %q:\n%.300s", ct, body)
	}
}

// TestRegisterAndClose: a pool registered with Register is listed without
// an Observer's extras, and an observed pool leaves the page once closed.
func TestRegisterAndClose(t *testing.T) {
	reg := shoaldebug.NewRegistry()
	stats := func() shoal.Stats { return shoal.Stats{MaxConns: 3, Share: 2, Demand: 5, BudgetMembers: 2} }
	unregister := reg.Register("plain", stats)
	pool, err := shoal.New(shoal.Config[int]{
		Dial:     func(context.Context) (int, error) { return 1, nil },
		MaxConns: 1, Observer: shoal.MultiObserver(shoal.BaseObserver{}, reg.NewObserver("observed")),
	})
	if err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		var out []string
		for _, p := range reg.Snapshot().Pools {
			out = append(out, p.Name)
		}
		return out
	}
	if got := strings.Join(names(), ","); got != "plain,observed" {
		t.Fatalf("pools %s", got)
	}
	srv := httptest.NewServer(reg.Handler())
	defer srv.Close()
	_, html := get(t, srv, "", "")
	for _, want := range []string{"budget share", `data-k="members">2<`, "Registered without a shoaldebug Observer"} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if err := pool.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	unregister()
	waitFor(t, func() bool { return len(names()) == 0 })
}

// TestNameMasked: a password written into a pool's name never reaches the
// page; plain names are left alone.
func TestNameMasked(t *testing.T) {
	reg := shoaldebug.NewRegistry()
	stats := func() shoal.Stats { return shoal.Stats{} }
	for _, name := range []string{
		"postgres://app:hunter2@db:5432/orders",
		"orders via postgres://app:hunter2@db/orders",
		"host=db user=app password=hunter2",
		"billing password=hunter2",
		"hunter2", // a plain name, not a password
	} {
		reg.Register(name, stats)
	}
	var got []string
	for _, p := range reg.Snapshot().Pools {
		got = append(got, p.Name)
	}
	want := []string{
		"postgres://app:xxxxx@db:5432/orders",
		"orders via postgres://app:xxxxx@db/orders",
		"host=db user=app password=xxxxx",
		"billing password=xxxxx",
		"hunter2",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("names shown:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBudgetListed: a registered budget is listed with a line per pool
// that shares it, in the HTML and the JSON, and leaves once unregistered.
func TestBudgetListed(t *testing.T) {
	reg := shoaldebug.NewRegistry()
	b, err := shoal.NewBudget(5, shoal.BudgetName("tenants"))
	if err != nil {
		t.Fatal(err)
	}
	unregister := reg.RegisterBudget("tenants", b.Stats)
	for _, name := range []string{"acme", "postgres://app:s3cret@db/globex"} {
		p, err := shoal.New(shoal.Config[int]{Name: name, Dial: func(context.Context) (int, error) { return 1, nil }, MaxConns: 2, MinConns: 1, Budget: b})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
	}
	srv := httptest.NewServer(reg.Handler())
	defer srv.Close()
	_, html := get(t, srv, "", "")
	for _, want := range []string{`data-budget="tenants"`, `data-member="acme"`, `data-k="min">1<`, `data-k="size">5<`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q:\n%s", want, html)
		}
	}
	if strings.Contains(html, "s3cret") {
		t.Fatal("a pool's password reached the page through its budget")
	}
	_, js := get(t, srv, "?format=json", "")
	var page shoaldebug.Page
	if err := json.Unmarshal([]byte(js), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Budgets) != 1 || len(page.Budgets[0].Stats.Members) != 2 || page.Budgets[0].Stats.Size != 5 {
		t.Fatalf("JSON budgets: %+v", page.Budgets)
	}
	unregister()
	if got := reg.Snapshot().Budgets; len(got) != 0 {
		t.Fatalf("after unregistering: %+v", got)
	}
}

// leakyHandler takes the lease the loaded pool never gives back: the leak
// the page must show under this function's name.
func leakyHandler(ctx context.Context, pool *shoal.Pool[int]) (shoal.Lease[int], error) {
	return pool.Acquire(ctx)
}
