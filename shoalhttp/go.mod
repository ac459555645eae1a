module github.com/shoalpool/shoal/shoalhttp

go 1.26.0

// The modules of this repository, from the checkout (see go.work).
replace github.com/shoalpool/shoal => ..

require (
	github.com/shoalpool/shoal v0.0.0-00010101000000-000000000000
	go.uber.org/goleak v1.3.0
	golang.org/x/net v0.62.0
)

require (
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/text v0.43.0 // indirect
)
