module github.com/shoalpool/shoal

go 1.26

require (
	go.uber.org/goleak v1.3.0 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
