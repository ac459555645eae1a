module github.com/shoalpool/shoal/internal/docsnippets

go 1.26.0

// The modules of this repository, from the checkout (see go.work).
replace (
	github.com/shoalpool/shoal => ../..
	github.com/shoalpool/shoal/internal/embedded => ../embedded
	github.com/shoalpool/shoal/internal/etcdtest => ../etcdtest
	github.com/shoalpool/shoal/internal/pgcount => ../pgcount
	github.com/shoalpool/shoal/internal/pgpair => ../pgpair
	github.com/shoalpool/shoal/internal/pgtest => ../pgtest
	github.com/shoalpool/shoal/shoaldebug => ../../shoaldebug
	github.com/shoalpool/shoal/shoaletcd => ../../shoaletcd
	github.com/shoalpool/shoal/shoalgrpc => ../../shoalgrpc
	github.com/shoalpool/shoal/shoalhttp => ../../shoalhttp
	github.com/shoalpool/shoal/shoalotel => ../../shoalotel
	github.com/shoalpool/shoal/shoalpgx => ../../shoalpgx
	github.com/shoalpool/shoal/shoalprom => ../../shoalprom
)

require (
	github.com/jackc/pgx/v5 v5.12.0
	github.com/prometheus/client_golang v1.25.0
	github.com/shoalpool/shoal v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/shoaldebug v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/shoaletcd v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/shoalgrpc v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/shoalhttp v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/shoalotel v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/shoalpgx v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/shoalprom v0.0.0-00010101000000-000000000000
	go.etcd.io/etcd/api/v3 v3.7.3
	go.etcd.io/etcd/client/v3 v3.7.3
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/sdk v1.47.0
	go.opentelemetry.io/otel/sdk/metric v1.47.0
	google.golang.org/grpc v1.85.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/coreos/go-semver v0.3.1 // indirect
	github.com/coreos/go-systemd/v22 v22.7.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.29.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	go.etcd.io/etcd/client/pkg/v3 v3.7.3 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.27.1 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261110000943-09e21b237f2c // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
