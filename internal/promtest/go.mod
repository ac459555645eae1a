module github.com/shoalpool/shoal/internal/promtest

go 1.26.0

// The modules of this repository, from the checkout (see go.work).
replace (
	github.com/shoalpool/shoal => ../..
	github.com/shoalpool/shoal/internal/pgcount => ../pgcount
	github.com/shoalpool/shoal/internal/pgpair => ../pgpair
	github.com/shoalpool/shoal/internal/pgtest => ../pgtest
	github.com/shoalpool/shoal/shoalpgx => ../../shoalpgx
	github.com/shoalpool/shoal/shoalprom => ../../shoalprom
)

require (
	github.com/jackc/pgx/v5 v5.12.0
	github.com/prometheus/client_golang v1.25.0
	github.com/shoalpool/shoal v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/internal/pgpair v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/shoalpgx v0.0.0-00010101000000-000000000000
	github.com/shoalpool/shoal/shoalprom v0.0.0-00010101000000-000000000000
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
