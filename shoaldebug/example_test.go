package shoaldebug_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoaldebug"
)

// session stands for a connection to your server.
type session struct{}

// dialSession stands for your Dial: it would connect and authenticate.
func dialSession(context.Context) (*session, error) { return &session{}, nil }

// The page mounted as net/http/pprof is, on an address only operators
// reach, with a pool listed on it through its Observer.
func Example() {
	mux := http.NewServeMux()
	mux.Handle("/debug/shoal", shoaldebug.Handler())

	pool, err := shoal.New(shoal.Config[*session]{
		Dial:          dialSession,
		MaxConns:      16,
		LeakThreshold: 30 * time.Second, // leaks are shown with the stack that acquired them
		Observer:      shoaldebug.NewObserver("orders-db"),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close(context.Background())

	log.Fatal(http.ListenAndServe("127.0.0.1:6060", mux))
}

// The page answers scripts with JSON. A Registry of its own keeps a page's
// pools apart from the default one's.
func ExampleRegistry() {
	ctx := context.Background()
	reg := shoaldebug.NewRegistry()
	pool, err := shoal.New(shoal.Config[*session]{
		Dial:     dialSession,
		MaxConns: 4,
		Observer: reg.NewObserver("orders-db"),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close(ctx)
	lease, err := pool.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Release()

	srv := httptest.NewServer(reg.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/debug/shoal?format=json")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var page shoaldebug.Page
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		log.Fatal(err)
	}
	for _, p := range page.Pools {
		fmt.Printf("%s: %d open, %d in use, watched by its Observer: %v\n",
			p.Name, p.Stats.TotalConns, p.Stats.InUseConns, p.Observed)
	}
	// Output: orders-db: 1 open, 1 in use, watched by its Observer: true
}

// A budget shared by a group of pools, on the page with a line per pool.
func ExampleRegisterBudget() {
	budget, err := shoal.NewBudget(40, shoal.BudgetName("tenants"))
	if err != nil {
		log.Fatal(err)
	}
	unregister := shoaldebug.RegisterBudget("tenants", budget.Stats)
	defer unregister()
	pool, _ := shoal.New(shoal.Config[*session]{Name: "acme", Dial: dialSession, MaxConns: 8, Budget: budget})
	defer pool.Close(context.Background())
	for _, b := range shoaldebug.Default.Snapshot().Budgets {
		fmt.Println(b.Name, b.Stats.Size, len(b.Stats.Members))
	}
	// Output: tenants 40 1
}
