# shellcheck shell=sh
# Where shoal's integration tests find their servers (started by
# scripts/services.sh). Use from the repository root: . scripts/test-env.sh
export SHOAL_TEST_POSTGRES='postgres://shoal:shoal-secret@127.0.0.1:5432/shoal_test?sslmode=disable'
export SHOAL_TEST_CLICKHOUSE='http://127.0.0.1:8123'
export SHOAL_TEST_INFLUXDB='http://127.0.0.1:8086'
export SHOAL_TEST_ETCD='127.0.0.1:2379'
export SHOAL_TEST_ETCD_CLUSTER='127.0.0.1:2381,127.0.0.1:2382,127.0.0.1:2383'
# A role per tenant: shoal_tenant_00 .. shoal_tenant_49, one password, each
# with a schema of its own in shoal_test as its search_path; %02d is the
# tenant's number (Go's fmt and printf(1) both fill it in).
export SHOAL_TEST_PG_TENANTS='postgres://shoal_tenant_%02d:shoal-tenant-secret@127.0.0.1:5432/shoal_test?sslmode=disable'
export SHOAL_TEST_PGBOUNCER='postgres://shoal:shoal-secret@127.0.0.1:6432/shoal_test?sslmode=disable'
# The HA pair: a primary, its synchronous standby, and both as one multi-host
# string that asks for the writable one (libpq's and pgx's syntax).
export SHOAL_TEST_PG_PRIMARY='postgres://shoal:shoal-secret@127.0.0.1:5441/shoal_test?sslmode=disable'
export SHOAL_TEST_PG_STANDBY='postgres://shoal:shoal-secret@127.0.0.1:5442/shoal_test?sslmode=disable'
export SHOAL_TEST_PG_HA='postgres://shoal:shoal-secret@127.0.0.1:5441,127.0.0.1:5442/shoal_test?sslmode=disable&target_session_attrs=read-write'
# Debian's prometheus package (promtool beside it): the alerting rules' and
# the dashboard's tests (internal/promtest) start their own on a free port.
export SHOAL_TEST_PROMETHEUS='/usr/bin/prometheus'
