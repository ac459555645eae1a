module github.com/shoalpool/shoal/internal/pgtest

go 1.26.0

// The modules of this repository, from the checkout (see go.work).
replace github.com/shoalpool/shoal => ../..

require (
	github.com/jackc/pgx/v5 v5.12.0
	github.com/shoalpool/shoal v0.0.0-00010101000000-000000000000
	go.uber.org/goleak v1.3.0
)

require (
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/text v0.43.0 // indirect
)
