#!/usr/bin/env bash
# Checks that a program importing one adapter meets only that adapter's own
# dependencies in its module graph: it builds a throwaway module (removed on
# exit) whose main package imports shoalpgx and nothing else, as a user's
# would, and fails when `go mod graph` shows any of the modules no
# PostgreSQL program should be charged for: grpc, etcd, OpenTelemetry,
# Prometheus, x/net, or the test-only libraries kept in internal/integration.
#
#   bash scripts/modgraph.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo="$PWD"

forbidden=(
	google.golang.org/grpc
	go.etcd.io/etcd
	go.opentelemetry.io
	github.com/prometheus
	golang.org/x/net
	github.com/chromedp
	github.com/Shopify/toxiproxy
	github.com/jmoiron/sqlx
	github.com/rs/zerolog
)

tmp="$(mktemp -d "${TMPDIR:-/tmp}/shoal-modgraph.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# The replaces a user's checkout-based setup would have (README, Install):
# every module of this repository from its directory.
replaces="$(bash scripts/modules.sh | while read -r dir; do
	[ "$dir" = . ] && dir=
	printf 'replace github.com/shoalpool/shoal%s => %s\n' "${dir:+/$dir}" "$repo${dir:+/$dir}"
done)"
cat >"$tmp/go.mod" <<GOMOD
module example.com/orders

go $(sed -n 's/^go //p' go.mod)

require github.com/shoalpool/shoal/shoalpgx v0.0.0

$replaces
GOMOD
cat >"$tmp/main.go" <<'GO'
// A program that uses shoalpgx and nothing else of shoal's.
package main

import (
	"context"

	"github.com/shoalpool/shoal/shoalpgx"
)

func main() {
	pool, err := shoalpgx.New(context.Background(), "postgres://app@127.0.0.1:5432/app")
	if err == nil {
		pool.Close()
	}
}
GO
cat go.sum shoalpgx/go.sum | sort -u >"$tmp/go.sum"
(cd "$tmp" && GOWORK=off GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1) ||
	(cd "$tmp" && GOWORK=off GOFLAGS=-mod=mod go mod tidy)
graph="$(cd "$tmp" && GOWORK=off go mod graph)"
bad=0
for m in "${forbidden[@]}"; do
	if hits="$(grep -F " $m" <<<"$graph")"; then
		printf 'modgraph.sh: a program importing only shoalpgx has %s in its module graph:\n%s\n' "$m" "$hits" >&2
		bad=1
	fi
done
[ "$bad" = 0 ] || exit 1
printf 'modgraph.sh: a program importing only shoalpgx: %d modules in its graph, none of grpc, etcd, OpenTelemetry, Prometheus, x/net or the test-only libraries\n' \
	"$(awk '{print $2}' <<<"$graph" | sed 's/@.*//' | sort -u | wc -l)"
