module github.com/shoalpool/shoal/shoaldebug

go 1.26.0

// The modules of this repository, from the checkout (see go.work).
replace github.com/shoalpool/shoal => ..

require github.com/shoalpool/shoal v0.0.0-00010101000000-000000000000
