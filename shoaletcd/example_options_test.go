package shoaletcd_test

import (
	"context"
	"fmt"
	"log"

	"github.com/shoalpool/shoal/shoaletcd"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Every member names the same budget and Size; a setting that cannot work
// is a *shoal.ConfigError naming the field, before New asks etcd anything.
func ExampleNew_options() {
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:2379"}}) // connects lazily
	if err != nil {
		log.Fatal(err)
	}
	defer etcd.Close()

	_, err = shoaletcd.New(context.Background(), etcd, shoaletcd.Options{Name: "orders-db", Size: 90, Min: 120})
	fmt.Println(err)
	// Output: shoaletcd: Options.Min must be <= Size (90), got 120
}
