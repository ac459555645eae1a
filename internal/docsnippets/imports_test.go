package docsnippets_test

// The packages outside the standard library that snippets may use, imported
// here so that this module requires them (go mod tidy keeps a requirement
// only for a package some file imports). TestSnippetImportsAreRequired
// holds snippetImports to this list.
import (
	_ "github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/shoalpool/shoal"
	_ "github.com/shoalpool/shoal/shoaldebug"
	_ "github.com/shoalpool/shoal/shoaletcd"
	_ "github.com/shoalpool/shoal/shoalgrpc"
	_ "github.com/shoalpool/shoal/shoalhttp"
	_ "github.com/shoalpool/shoal/shoalotel"
	_ "github.com/shoalpool/shoal/shoalpgx"
	_ "github.com/shoalpool/shoal/shoalpgx/stdlib"
	_ "github.com/shoalpool/shoal/shoalprom"
	_ "go.etcd.io/etcd/api/v3/etcdserverpb"
	_ "go.etcd.io/etcd/client/v3"
	_ "go.opentelemetry.io/otel"
	_ "go.opentelemetry.io/otel/sdk/metric"
	_ "go.opentelemetry.io/otel/sdk/trace"
	_ "google.golang.org/grpc"
	_ "google.golang.org/grpc/credentials/insecure"
)

// snippetImports maps the package names a snippet that is a function body
// may use to their import paths: the wrapper imports the ones the body
// names. A whole-file snippet writes its own imports.
var snippetImports = map[string]string{
	"context":  "context",
	"errors":   "errors",
	"fmt":      "fmt",
	"http":     "net/http",
	"log":      "log",
	"net":      "net",
	"os":       "os",
	"slog":     "log/slog",
	"sql":      "database/sql",
	"strings":  "strings",
	"time":     "time",
	"url":      "net/url",
	"httptest": "net/http/httptest",

	"shoal":      "github.com/shoalpool/shoal",
	"shoaldebug": "github.com/shoalpool/shoal/shoaldebug",
	"shoaletcd":  "github.com/shoalpool/shoal/shoaletcd",
	"shoalgrpc":  "github.com/shoalpool/shoal/shoalgrpc",
	"shoalhttp":  "github.com/shoalpool/shoal/shoalhttp",
	"shoalotel":  "github.com/shoalpool/shoal/shoalotel",
	"shoalpgx":   "github.com/shoalpool/shoal/shoalpgx",
	"stdlib":     "github.com/shoalpool/shoal/shoalpgx/stdlib",
	"shoalprom":  "github.com/shoalpool/shoal/shoalprom",

	"pgx":          "github.com/jackc/pgx/v5",
	"pgconn":       "github.com/jackc/pgx/v5/pgconn",
	"pgxpool":      "github.com/jackc/pgx/v5/pgxpool",
	"prometheus":   "github.com/prometheus/client_golang/prometheus",
	"promhttp":     "github.com/prometheus/client_golang/prometheus/promhttp",
	"etcdserverpb": "go.etcd.io/etcd/api/v3/etcdserverpb",
	"clientv3":     "go.etcd.io/etcd/client/v3",
	"otel":         "go.opentelemetry.io/otel",
	"sdkmetric":    "go.opentelemetry.io/otel/sdk/metric",
	"sdktrace":     "go.opentelemetry.io/otel/sdk/trace",
	"grpc":         "google.golang.org/grpc",
	"insecure":     "google.golang.org/grpc/credentials/insecure",
}
