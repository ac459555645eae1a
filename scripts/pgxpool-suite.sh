#!/usr/bin/env bash
# Runs pgx's own pgxpool test suite against shoalpgx, to hold shoalpgx to its
# promise of being a drop-in for pgxpool.
#
#   bash scripts/pgxpool-suite.sh
#
# It takes pgx's version from shoalpgx/go.mod and its source from the module cache,
# and builds a temporary Go module (removed on exit) that holds:
#   - pgxpool's *_test.go, with only the import path github.com/jackc/pgx/v5/pgxpool
#     rewritten to github.com/shoalpool/shoal/shoalpgx, the qualifier pgxpool.
#     to shoalpgx. (wherever it stands before an exported name, comments
#     included), and the package clause pgxpool_test to shoalpgx_test.
#     Tests in package pgxpool (internal tests, which reach pgxpool's
#     unexported names) cannot run against shoalpgx: they are counted and
#     listed as not applicable;
#   - the pgx internal packages the tests import (internal/pgmock), copied
#     under the temporary module with that import rewritten too;
#   - a go.mod that requires the same pgx and shoalpgx, and replaces each of
#     shoal's modules with its directory in this repository.
# No pgx code is ever written into the repository.
#
# Then it runs go test -json (-race, -count=1, a timeout) with
# PGX_TEST_DATABASE=$SHOAL_TEST_POSTGRES, and prints how many tests passed,
# failed, skipped, did not compile and are not applicable, with each failed
# and skipped test. When the test binary dies (a hung test makes it time
# out) before every test ran, the tests it did not get to run are run again
# in a new go test, and the hung ones count as failed. The pgxpool tests
# need no more of the server than shoal's own (no extension, no other role:
# they create tables in the public schema and temporary tables, and
# terminate their own backends, all of which the owner of shoal_test may).
#
# It exits non-zero when a test fails that
# scripts/pgxpool-suite/expected-failures.txt does not list, when a listed
# test passes, when the list names a test pgx does not have, or when the
# tests do not compile against shoalpgx (it then prints the compiler's
# errors and which tests reach them). The helper it builds and runs is
# scripts/pgxpool-suite/*.go.
#
# Environment:
#   SHOAL_TEST_POSTGRES     the server (. scripts/test-env.sh sets it); unset
#                           or unreachable, the suite is skipped
#   SHOAL_REQUIRE_SERVICES  1: no reachable server is a failure, not a skip
#   PGXPOOL_SUITE_RACE      0: without the race detector (default 1)
#   PGXPOOL_SUITE_TIMEOUT   go test -timeout of each round (default 90s; the
#                           suite takes about 15s)
#   PGXPOOL_SUITE_KEEP      1: keep the temporary module and say where
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo="$PWD"
start=$SECONDS

die() { printf 'pgxpool-suite.sh: error: %s\n' "$*" >&2; exit 1; }

# Go itself (in case PATH lacks it).
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	export PATH="/usr/local/go/bin:$PATH"
fi

# pgx as shoalpgx's go.mod has it.
pgx_version="$(cd shoalpgx && GOWORK=off go list -m -f '{{.Version}}' github.com/jackc/pgx/v5)"
[ -n "$pgx_version" ] || die "shoalpgx/go.mod does not require github.com/jackc/pgx/v5"
pgx_dir="$(cd shoalpgx && GOWORK=off go list -m -f '{{.Dir}}' github.com/jackc/pgx/v5)"
if [ -z "$pgx_dir" ] || [ ! -d "$pgx_dir/pgxpool" ]; then
	(cd shoalpgx && GOWORK=off go mod download github.com/jackc/pgx/v5)
	pgx_dir="$(cd shoalpgx && GOWORK=off go list -m -f '{{.Dir}}' github.com/jackc/pgx/v5)"
fi
[ -d "$pgx_dir/pgxpool" ] || die "no pgxpool in pgx's source ($pgx_dir)"
go_line="$(grep -m1 '^go ' go.mod)"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/pgxpool-suite.XXXXXX")"
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	if [ "${PGXPOOL_SUITE_KEEP:-0}" = 1 ]; then
		printf 'pgxpool-suite.sh: kept the temporary module in %s\n' "$tmp" >&2
	else
		chmod -R u+w "$tmp" 2>/dev/null || true
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT

mod=pgxpoolsuite # the temporary module's path
pkg="$tmp/pgxpool"
mkdir -p "$pkg"

# The tests: external ones (package pgxpool_test) only; internal ones stay
# behind and the report lists them.
for f in "$pgx_dir"/pgxpool/*_test.go; do
	clause="$(grep -m1 '^package ' "$f")"
	case "$clause" in
	"package pgxpool_test") cp "$f" "$pkg/" ;;
	"package pgxpool") ;;
	*) die "$(basename "$f"): unexpected package clause: $clause" ;;
	esac
done
chmod -R u+w "$tmp"

# rewrite FILE...: the import paths and qualifiers, nothing else.
rewrite() {
	sed -i -E \
		-e 's#"github\.com/jackc/pgx/v5/pgxpool"#"github.com/shoalpool/shoal/shoalpgx"#' \
		-e "s#\"github\\.com/jackc/pgx/v5/internal/#\"$mod/internal/#" \
		-e 's/\bpgxpool\.([A-Z])/shoalpgx.\1/g' \
		-e 's/^package pgxpool_test$/package shoalpgx_test/' \
		"$@"
}

# The internal packages the tests import, and those these import in turn.
copied=" "
while :; do
	mapfile -t wanted < <(grep -rhoE '"github\.com/jackc/pgx/v5/internal/[A-Za-z0-9_/]+"' "$tmp" --include='*.go' |
		sed -E 's#^"github\.com/jackc/pgx/v5/internal/(.*)"$#\1#' | sort -u)
	new=0
	for p in "${wanted[@]}"; do
		case "$copied" in *" $p "*) continue ;; esac
		[ -d "$pgx_dir/internal/$p" ] || die "the tests import pgx's internal/$p, which $pgx_dir lacks"
		mkdir -p "$tmp/internal/$p"
		for f in "$pgx_dir/internal/$p"/*.go; do
			case "$f" in *_test.go) continue ;; esac
			cp "$f" "$tmp/internal/$p/"
		done
		chmod -R u+w "$tmp/internal/$p"
		copied="$copied$p "
		new=1
	done
	[ "$new" = 1 ] || break
done
mapfile -t files < <(find "$tmp" -name '*.go')
rewrite "${files[@]}"

# Every module of this repository (go.work's list) is replaced with its
# directory: shoalpgx's own go.mod requires some of them (its tests' helpers).
replaces="$(sed -n 's#^[[:space:]]*\.\/\{0,1\}\([^[:space:])]*\)$#\1#p' go.work | while read -r dir; do
	[ "$dir" = . ] && dir=
	[ "$dir" = "" ] || [ "${dir#./}" = "$dir" ] || dir="${dir#./}"
	printf 'replace github.com/shoalpool/shoal%s => %s\n' "${dir:+/$dir}" "$repo${dir:+/$dir}"
done)"
cat >"$tmp/go.mod" <<EOF
module $mod

$go_line

require (
	github.com/jackc/pgx/v5 $pgx_version
	github.com/shoalpool/shoal/shoalpgx v0.0.0
)

$replaces
EOF
# Checksums: shoal's and pgx's own go.sum cover every module needed but
# pgx's test dependencies' downloads, which go fetches from the module proxy
# (or finds in the module cache) and checks against pgx's go.sum.
cat go.sum shoalpgx/go.sum "$pgx_dir/go.sum" | sort -u >"$tmp/go.sum"

# The helper (checks the server, reads the results).
mkdir -p "$tmp/suitetool"
cp scripts/pgxpool-suite/*.go "$tmp/suitetool/"

export GOWORK=off
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod"
# Named file by file: each carries "go:build ignore", which a package
# build would honour.
(cd "$tmp" && go build -o "$tmp/suite" ./suitetool/*.go) || die "could not build the helper"

printf '==> pgx %s pgxpool tests (%s) against shoalpgx\n' "$pgx_version" "$pgx_dir"

# The server.
required="${SHOAL_REQUIRE_SERVICES:-0}"
url="${SHOAL_TEST_POSTGRES:-}"
if [ -z "$url" ]; then
	[ "$required" != 1 ] || die "SHOAL_TEST_POSTGRES is not set and SHOAL_REQUIRE_SERVICES=1 (run scripts/services.sh and . scripts/test-env.sh)"
	echo "pgxpool suite skipped: SHOAL_TEST_POSTGRES is not set"
	exit 0
fi
export PGX_TEST_DATABASE="$url"
if ! why="$("$tmp/suite" check)"; then
	[ "$required" != 1 ] || die "PostgreSQL at SHOAL_TEST_POSTGRES is unreachable and SHOAL_REQUIRE_SERVICES=1: $why"
	echo "pgxpool suite skipped: PostgreSQL at SHOAL_TEST_POSTGRES is unreachable: $why"
	exit 0
fi

# The run. -gcflags=-e: every compile error, not the first ten. -vet=off:
# the tests are pgx's; vet is not ours to run on them.
args=(-json -count=1 -vet=off -gcflags=-e -timeout "${PGXPOOL_SUITE_TIMEOUT:-90s}")
[ "${PGXPOOL_SUITE_RACE:-1}" = 0 ] || args+=(-race)
src="$pgx_dir/pgxpool"
round=1
jsons=("$tmp/test.1.json")
set +e
(cd "$tmp" && go test "${args[@]}" ./pgxpool >"$tmp/test.1.json" 2>"$tmp/test.stderr")
set -e
# A test that hangs (one of pgx's tests that fails while it holds a
# connection waits forever in its deferred pool.Close) makes the test
# binary time out, and the tests waiting for their parallel turn never run:
# run those again, until every test has a result (the hung ones count as
# failed).
while [ "$round" -lt 10 ]; do
	run="$("$tmp/suite" pending -src "$src" "${jsons[@]}")"
	[ -n "$run" ] || break
	round=$((round + 1))
	jsons+=("$tmp/test.$round.json")
	printf '==> the test binary died before some tests ran; running those again (round %d)\n' "$round"
	set +e
	(cd "$tmp" && go test "${args[@]}" -run "$run" ./pgxpool >"$tmp/test.$round.json" 2>>"$tmp/test.stderr")
	set -e
done

status=0
"$tmp/suite" report -pgx "$pgx_version" -src "$src" -pkgdir "$pkg" -moddir "$tmp" \
	-stderr "$tmp/test.stderr" -elapsed "$((SECONDS - start))" \
	-expected "$repo/scripts/pgxpool-suite/expected-failures.txt" "${jsons[@]}" || status=$?
exit "$status"
