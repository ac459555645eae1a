module github.com/shoalpool/shoal/shoalpgx

go 1.26.0

// The modules of this repository, from the checkout (see go.work).
replace (
	github.com/shoalpool/shoal => ..
	github.com/shoalpool/shoal/internal/pgcount => ../internal/pgcount
	github.com/shoalpool/shoal/internal/pgpair => ../internal/pgpair
	github.com/shoalpool/shoal/internal/pgtest => ../internal/pgtest
)

require (
	github.com/jackc/pgx/v5 v5.12.0
	github.com/shoalpool/shoal v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/internal/pgcount v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/internal/pgpair v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/internal/pgtest v0.0.0-00010101000000-000000000000
)

require (
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/text v0.43.0 // indirect
)
