module github.com/shoalpool/shoal/cmd/shoal

go 1.26.0

// The modules of this repository, from the checkout (see go.work).
replace (
	github.com/shoalpool/shoal => ../..
	github.com/shoalpool/shoal/internal/benchrun => ../../internal/benchrun
	github.com/shoalpool/shoal/internal/embedded => ../../internal/embedded
	github.com/shoalpool/shoal/internal/etcdtest => ../../internal/etcdtest
	github.com/shoalpool/shoal/internal/pgcount => ../../internal/pgcount
	github.com/shoalpool/shoal/internal/pgpair => ../../internal/pgpair
	github.com/shoalpool/shoal/internal/pgtest => ../../internal/pgtest
	github.com/shoalpool/shoal/shoaletcd => ../../shoaletcd
	github.com/shoalpool/shoal/shoalgrpc => ../../shoalgrpc
	github.com/shoalpool/shoal/shoalhttp => ../../shoalhttp
	github.com/shoalpool/shoal/shoalpgx => ../../shoalpgx
)

require (
	github.com/jackc/pgx/v5 v5.12.0
	github.com/shoalpool/shoal v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/internal/benchrun v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/internal/embedded v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/internal/etcdtest v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/shoaletcd v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/shoalgrpc v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/shoalhttp v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/shoalpgx v0.0.0-00010101000000-000000000000
	go.etcd.io/etcd/client/v3 v3.7.3
	go.uber.org/goleak v1.3.0
	go.uber.org/zap v1.27.1
	gonum.org/v1/gonum v0.17.0
	google.golang.org/grpc v1.85.0
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/coreos/go-semver v0.3.1 // indirect
	github.com/coreos/go-systemd/v22 v22.7.0 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.29.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	go.etcd.io/etcd/api/v3 v3.7.3 // indirect
	go.etcd.io/etcd/client/pkg/v3 v3.7.3 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	gonum.org/v1/plot v0.17.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261110000943-09e21b237f2c // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
