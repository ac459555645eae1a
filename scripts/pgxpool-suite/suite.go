//go:build ignore

// Command suite is the helper of scripts/pgxpool-suite.sh. The script copies
// its files (this directory's .go files, each built only when named, so
// that the root module never builds them) into the temporary module where
// it runs pgx's pgxpool tests against shoalpgx, builds it there and runs
// its commands:
//
//	suite check
//	    exits 0 when the server in PGX_TEST_DATABASE answers, 1 (with the
//	    error) when it does not
//	suite pending -src DIR JSON...
//	    prints a go test -run pattern for the tests that the runs whose
//	    go test -json output is in the JSON files never started, or never
//	    resumed after t.Parallel paused them, because the test binary
//	    died first (a timeout, a crash); nothing when there are none. A
//	    test that was running when the binary died is not in it: it hung
//	    or crashed, and counts as failed
//	suite report -src DIR -pkgdir DIR -moddir DIR -stderr FILE -expected FILE -pgx VERSION -elapsed SECONDS JSON...
//	    reads the go test -json output of those runs and prints the
//	    counts, each failed and skipped test and, when the tests do not
//	    compile, the errors and which tests reach them; exits 1 when a
//	    test fails that the expected-failures file does not list, a listed
//	    test passes, the tests do not compile, or the file names a test
//	    that does not exist
//
// It uses pgx only for check; report needs the standard library alone.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: suite check | suite report [flags]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "check":
		os.Exit(check())
	case "pending":
		os.Exit(pending(os.Args[2:]))
	case "report":
		os.Exit(report(os.Args[2:]))
	}
	fmt.Fprintf(os.Stderr, "suite: unknown command %q\n", os.Args[1])
	os.Exit(2)
}

// check connects once to PGX_TEST_DATABASE, as the tests will.
func check() int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, os.Getenv("PGX_TEST_DATABASE"))
	if err == nil {
		err = conn.Ping(ctx)
		conn.Close(ctx)
	}
	if err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}
