module github.com/shoalpool/shoal/shoaletcd

go 1.26.0

// The modules of this repository, from the checkout (see go.work).
replace (
	github.com/shoalpool/shoal => ..
	github.com/shoalpool/shoal/internal/etcdtest => ../internal/etcdtest
)

require (
	github.com/shoalpool/shoal v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/internal/etcdtest v0.0.0-00010101000000-000000000000
	go.etcd.io/etcd/api/v3 v3.7.3
	go.etcd.io/etcd/client/v3 v3.7.3
	go.uber.org/goleak v1.3.0
	go.uber.org/zap v1.27.1
	google.golang.org/grpc v1.85.0
)

require (
	github.com/coreos/go-semver v0.3.1 // indirect
	github.com/coreos/go-systemd/v22 v22.7.0 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.29.0 // indirect
	go.etcd.io/etcd/client/pkg/v3 v3.7.3 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261110000943-09e21b237f2c // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
