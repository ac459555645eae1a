module github.com/shoalpool/shoal/shoalgrpc

go 1.26.0

// The modules of this repository, from the checkout (see go.work).
replace (
	github.com/shoalpool/shoal => ..
	github.com/shoalpool/shoal/internal/embedded => ../internal/embedded
)

require (
	github.com/shoalpool/shoal v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/internal/embedded v0.0.0-00010101000000-000000000000
	go.uber.org/goleak v1.3.0
	google.golang.org/grpc v1.85.0
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261110000943-09e21b237f2c // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
