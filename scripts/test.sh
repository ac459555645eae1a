#!/usr/bin/env bash
# Runs all of shoal's tests, on a fresh machine too: it first installs and
# starts the real servers the integration tests use (PostgreSQL alone and as
# a primary/standby pair, ClickHouse, InfluxDB, etcd alone and as a 3-member
# cluster, PgBouncer; needs root and Debian's packages), then runs every
# module's tests with the race detector, checks the module graph of a
# program that imports only shoalpgx, and last runs pgx's pgxpool tests
# against shoalpgx (scripts/pgxpool-suite.sh).
#
#   bash scripts/test.sh                         everything
#   SHOAL_SKIP_SERVICES=1 bash scripts/test.sh   servers already running (or
#                                                none: their tests skip)
#   bash scripts/test.sh -run TestPool ./        extra arguments go to go test,
#                                                from the repository's root (go.work
#                                                makes ./shoalpgx and the like work)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '==> %s\n' "$*"; }

if [ "${SHOAL_SKIP_SERVICES:-0}" != 1 ]; then
	step "services"
	bash scripts/services.sh
	# Where the tests find the servers (unless the caller said otherwise).
	: "${SHOAL_TEST_POSTGRES:=postgres://shoal:shoal-secret@127.0.0.1:5432/shoal_test?sslmode=disable}"
	: "${SHOAL_TEST_CLICKHOUSE:=http://127.0.0.1:8123}"
	: "${SHOAL_TEST_INFLUXDB:=http://127.0.0.1:8086}"
	: "${SHOAL_TEST_ETCD:=127.0.0.1:2379}"
	: "${SHOAL_TEST_ETCD_CLUSTER:=127.0.0.1:2381,127.0.0.1:2382,127.0.0.1:2383}"
	: "${SHOAL_TEST_PG_TENANTS:=postgres://shoal_tenant_%02d:shoal-tenant-secret@127.0.0.1:5432/shoal_test?sslmode=disable}"
	: "${SHOAL_TEST_PGBOUNCER:=postgres://shoal:shoal-secret@127.0.0.1:6432/shoal_test?sslmode=disable}"
	: "${SHOAL_TEST_PG_PRIMARY:=postgres://shoal:shoal-secret@127.0.0.1:5441/shoal_test?sslmode=disable}"
	: "${SHOAL_TEST_PG_STANDBY:=postgres://shoal:shoal-secret@127.0.0.1:5442/shoal_test?sslmode=disable}"
	: "${SHOAL_TEST_PG_HA:=postgres://shoal:shoal-secret@127.0.0.1:5441,127.0.0.1:5442/shoal_test?sslmode=disable&target_session_attrs=read-write}"
	: "${SHOAL_TEST_PROMETHEUS:=/usr/bin/prometheus}"
	export SHOAL_TEST_POSTGRES SHOAL_TEST_CLICKHOUSE SHOAL_TEST_INFLUXDB SHOAL_TEST_ETCD \
		SHOAL_TEST_ETCD_CLUSTER SHOAL_TEST_PG_TENANTS SHOAL_TEST_PGBOUNCER \
		SHOAL_TEST_PG_PRIMARY SHOAL_TEST_PG_STANDBY SHOAL_TEST_PG_HA SHOAL_TEST_PROMETHEUS
fi

if [ "$#" -gt 0 ]; then
	step "go test -race $*"
	go test -race -count=1 -timeout 30m "$@"
	exit 0
fi

# Every module (scripts/modules.sh: go.work's list), each on its own
# (GOWORK=off), as a program that requires it builds it: with the versions
# its own go.mod asks for. With the race detector, one package at a time
# (-p 1): several packages share the same real servers, and one package's
# load test must not time out another's connection. bench/ runs last,
# without -race: its tests are quick checks of the benchmark programs.
mapfile -t modules < <(bash scripts/modules.sh)
for m in "${modules[@]}"; do
	[ "$m" = bench ] && continue
	step "$m: go test -race -p 1 ./..."
	(cd "$m" && GOWORK=off go test -race -count=1 -p 1 -timeout 30m ./...)
done
# shoalpgx's tests of what its operations promise, again with every test
# pool pipelining (SHOAL_TEST_PIPELINE, helpers_test.go), where the promise
# holds with it: the tests that an unclosed Rows, Row or batch holds its
# connection are left out, since a pipelined one holds none.
step "shoalpgx pipelined: SHOAL_TEST_PIPELINE=4 go test -race -run ..."
(cd shoalpgx && SHOAL_TEST_PIPELINE=4 GOWORK=off go test -race -count=1 -timeout 30m -run "$(bash ../scripts/pipelined-tests.sh)" .)
# The tests that count allocations, again without the race detector, which
# allocates for its own bookkeeping and makes a sync.Pool drop what it is
# given: under -race they skip.
step "allocations: go test -run AllocatesNothing|ReuseTheirRequests (no -race)"
GOWORK=off go test -count=1 -run 'AllocatesNothing' .
(cd shoalpgx && GOWORK=off go test -count=1 -run 'AllocatesNothing|ReuseTheirRequests' .)
step "bench: go vet ./... && go test ./..."
(cd bench && GOWORK=off go vet ./... && GOWORK=off go test -count=1 ./...)

# A program importing only shoalpgx meets none of grpc, etcd,
# OpenTelemetry, Prometheus or x/net in its module graph.
step "module graph: scripts/modgraph.sh"
bash scripts/modgraph.sh

# pgx's own pgxpool tests against shoalpgx, which promises to be a drop-in
# for pgxpool (see the script; its expected failures are listed in
# scripts/pgxpool-suite/expected-failures.txt).
step "pgxpool suite: scripts/pgxpool-suite.sh"
bash scripts/pgxpool-suite.sh
