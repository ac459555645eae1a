#!/usr/bin/env bash
# Runs all of shoal's tests. Integration tests talk to the servers that
# scripts/services.sh starts; first: bash scripts/services.sh && . scripts/test-env.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '==> %s\n' "$*"; }

# The library, with the race detector.
step "go test -race ./..."
go test -race -count=1 -timeout 30m ./...

# bench/ is a separate Go module: vet it and run its tests (no -race, quick).
if [ -f bench/go.mod ]; then
	step "bench: go vet ./..."
	(cd bench && go vet ./...)
	step "bench: go test ./..."
	(cd bench && go test -count=1 ./...)
fi
