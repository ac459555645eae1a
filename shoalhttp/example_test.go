package shoalhttp_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalhttp"
)

// A Transport drops into an http.Client; the zero Options suit most
// programs.
func ExampleNewTransport() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello over "+r.Proto)
	}))
	defer srv.Close()

	tr, err := shoalhttp.NewTransport(shoalhttp.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close(context.Background())
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}

	resp, err := client.Get(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body) // read to the end: the connection goes back to the pool
	resp.Body.Close()
	fmt.Println(string(body))
	// Output: hello over HTTP/1.1
}

// Stats shows each origin's pool.
func ExampleTransport_Stats() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()

	tr, err := shoalhttp.NewTransport(shoalhttp.Options{MaxConns: 8})
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close(context.Background())
	client := &http.Client{Transport: tr}
	for range 3 {
		resp, err := client.Get(srv.URL)
		if err != nil {
			log.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for _, st := range tr.Stats() {
		fmt.Printf("open %d, idle %d, max %d, acquires %d\n", st.TotalConns, st.IdleConns, st.MaxConns, st.Acquires)
	}
	// Output: open 1, idle 1, max 8, acquires 3
}

// Warm opens connections before the first request needs them.
func ExampleTransport_Warm() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()

	tr, err := shoalhttp.NewTransport(shoalhttp.Options{MinIdle: 4})
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Warm(ctx, srv.URL); err != nil {
		log.Fatal(err)
	}
	for _, st := range tr.Stats() {
		fmt.Println("idle connections:", st.IdleConns)
	}
	// Output: idle connections: 4
}

// Hooks see every connection open and close, with the negotiated protocol.
func ExampleOptions_hooks() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close") // the server ends each connection
	}))
	defer srv.Close()

	opened := make(chan string, 1)
	closed := make(chan string, 1)
	tr, err := shoalhttp.NewTransport(shoalhttp.Options{
		OnConnect:    func(c shoalhttp.ConnInfo) { opened <- c.Protocol },
		OnDisconnect: func(c shoalhttp.ConnInfo, why shoal.Reason) { closed <- why.String() },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close(context.Background())
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("opened", <-opened, "closed:", <-closed)
	// Output: opened HTTP/1.1 closed: discarded
}

// MaxConnsTotal caps the connections to all origins together: here three
// servers share two connections, and Budget shows each origin's part.
func ExampleTransport_Budget() {
	var urls []string
	for range 3 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "ok")
		}))
		defer srv.Close()
		urls = append(urls, srv.URL)
	}
	tr, err := shoalhttp.NewTransport(shoalhttp.Options{MaxConnsTotal: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close(context.Background())
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for _, u := range urls {
		resp, err := client.Get(u)
		if err != nil {
			log.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	s := tr.Budget().Stats()
	fmt.Printf("%d origins share %d connections; %d open\n", len(s.Members), s.Size, s.InUse)
	// Output: 3 origins share 2 connections; 2 open
}
