#!/usr/bin/env bash
# Installs (from Debian's packages) and starts every real server that shoal's
# integration tests talk to, then prints the environment the tests read:
#
#   PostgreSQL  127.0.0.1:5432  role shoal / db shoal_test, password auth (SCRAM);
#                               roles shoal_tenant_00..49, a schema each
#   PostgreSQL  127.0.0.1:5441  primary of the HA pair, same role and db
#   PostgreSQL  127.0.0.1:5442  its synchronous streaming standby
#                               (internal/pgpair/pair.sh; tests fail it over)
#   ClickHouse  127.0.0.1:8123  HTTP interface (native protocol on 127.0.0.1:9000)
#   InfluxDB    127.0.0.1:8086  HTTP API, database shoal_test
#   etcd        127.0.0.1:2379  client URL (peer URL 127.0.0.1:2380)
#   etcd x3     127.0.0.1:2381,2382,2383  a 3-member cluster (peers 2391-2393)
#   PgBouncer   127.0.0.1:6432  transaction pooling, 40 server connections,
#                               in front of PostgreSQL's shoal_test as shoal
#   Prometheus  installed, not started: internal/promtest's tests run their
#               own, on a free loopback port (promtool comes with it)
#
# Runs as root on Debian bookworm, without systemd: every server is started
# directly as a background daemon, listening on loopback only. Safe to run any
# number of times: it installs only what is missing, starts only servers that
# do not answer yet and changes PostgreSQL's configuration only when needed.
#
# Logs: PostgreSQL /var/log/postgresql/ (the pair's too), ClickHouse /var/log/clickhouse-server/,
# InfluxDB /var/log/influxdb/influxd.log, etcd /var/log/shoal-etcd.log, the
# etcd cluster /var/log/shoal-etcd-cluster-N.log, PgBouncer
# /var/log/shoal-pgbouncer.log.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Seconds to wait for each server to answer before giving up.
wait_secs="${SHOAL_SERVICES_WAIT:-60}"

step() { printf '==> %s\n' "$*"; }
die() { printf 'services.sh: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root"

# ours PIDFILE ARG: true when PIDFILE names a live process that has ARG as one
# of its arguments. A machine brought back from an image keeps /run's pid
# files but not their processes, and a new process can get an old pid: start-
# stop-daemon would take another etcd for the member it looks for and start
# nothing. So a pid file whose process is not ours is removed.
ours() {
	local file="$1" arg="$2" pid
	pid="$(head -n 1 "$file" 2>/dev/null || true)"
	if [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] &&
		tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qxF -- "$arg"; then
		return 0
	fi
	rm -f "$file"
	return 1
}

# wait_for NAME LOGFILE CMD...: retry CMD once a second until it succeeds;
# after $wait_secs seconds print the tail of LOGFILE and fail.
wait_for() {
	local name="$1" log="$2"
	shift 2
	local deadline=$((SECONDS + wait_secs))
	until "$@" >/dev/null 2>&1; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			printf 'services.sh: error: %s did not answer within %ss\n' \
				"$name" "$wait_secs" >&2
			if [ -n "$log" ] && [ -r "$log" ]; then
				printf -- '--- last lines of %s ---\n' "$log" >&2
				tail -n 40 "$log" >&2
			fi
			exit 1
		fi
		sleep 1
	done
	printf '    %s is up\n' "$name"
}

# ---------------------------------------------------------------------------
step "install missing packages"
packages=(curl postgresql clickhouse-server clickhouse-client influxdb etcd-server etcd-client pgbouncer chromium prometheus)
missing=()
for p in "${packages[@]}"; do
	status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
	[ "$status" = "install ok installed" ] || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	echo "    installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# Keep the packages' maintainer scripts from starting the servers through
	# their init scripts (there is no init system here); we start them below.
	# Without this, a failed start in a postinst would fail the whole install.
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	apt-get update -q || echo "    warning: apt-get update failed; trying the install anyway" >&2
	apt-get install -y -q --no-install-recommends "${missing[@]}"
else
	echo "    all installed"
fi

# ---------------------------------------------------------------------------
step "PostgreSQL"
# The cluster serving port 5432 (Debian's postgresql package creates "main").
read -r pg_ver pg_name _ _ _ pg_data _ < <(pg_lsclusters -h | awk '$3 == 5432 {print; exit}') ||
	die "no PostgreSQL cluster on port 5432 (pg_lsclusters shows: $(pg_lsclusters -h))"
pg_conf="/etc/postgresql/$pg_ver/$pg_name"
pg_log="/var/log/postgresql/postgresql-$pg_ver-$pg_name.log"
pg_ready() { pg_isready -q -h 127.0.0.1 -p 5432; }
# Administrative SQL goes over the Unix socket as the postgres superuser, which
# works with Debian's default "peer" rule as well as with "trust".
pg_admin() { (cd / && runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"); }

if ! pg_ready; then
	echo "    starting cluster $pg_ver/$pg_name"
	# A server that is gone may have left pid and lock files whose pids are
	# live processes now; pg_ctlcluster and postgres would each refuse to
	# start (internal/pgpair/pair.sh's launch says more).
	if ! ours "$pg_data/postmaster.pid" "$pg_data"; then
		rm -f "/var/run/postgresql/$pg_ver-$pg_name.pid" /var/run/postgresql/.s.PGSQL.5432.lock
	fi
	pg_ctlcluster --skip-systemctl-redirect "$pg_ver" "$pg_name" start || true
fi
wait_for "PostgreSQL (pg_isready -h 127.0.0.1)" "$pg_log" pg_ready

# Password connections must really cost a SCRAM exchange, so the test role
# gets scram-sha-256 rules placed before any other rule (the first matching
# line wins, and this machine has "host all all 127.0.0.1/32 trust"). The
# "local" rule is PgBouncer's way in: it reaches PostgreSQL over the Unix
# socket, so that its server connections are the shoal backends without a
# client address and can be counted apart from direct TCP clients.
# The tenant roles (the members of shoal_tenants, made below) log in over
# TCP with a password of their own, the same way.
# Other roles and databases keep whatever access they had.
hba="$pg_conf/pg_hba.conf"
export SHOAL_HBA_BLOCK="# shoal integration tests: password (SCRAM) over TCP and the socket (scripts/services.sh)
local   shoal_test      shoal                                   scram-sha-256
host    shoal_test      shoal           127.0.0.1/32            scram-sha-256
host    shoal_test      shoal           ::1/128                 scram-sha-256
host    shoal_test      +shoal_tenants  127.0.0.1/32            scram-sha-256
host    shoal_test      +shoal_tenants  ::1/128                 scram-sha-256"
hba_new="$(awk '
	BEGIN { block = ENVIRON["SHOAL_HBA_BLOCK"] }
	/^# shoal integration tests: password/ { next }        # drop an older copy
	/^[ \t]*(host|local)[ \t]+shoal_test[ \t]+(shoal|\+shoal_tenants)[ \t]/ { next } # of our block
	!done && $0 !~ /^[ \t]*(#|$)/ { print block; done = 1 } # before the first rule
	{ print }
	END { if (!done) print block }
' "$hba")"
pg_reload=0
if [ "$hba_new" != "$(cat "$hba")" ]; then
	echo "    adding the shoal scram-sha-256 rules to $hba"
	cp -p "$hba" "$hba.bak-shoal"
	printf '%s\n' "$hba_new" >"$hba"
	pg_reload=1
fi

if [ "$(pg_admin -c 'SHOW password_encryption')" != "scram-sha-256" ]; then
	echo "    setting password_encryption = scram-sha-256"
	pg_admin -c "ALTER SYSTEM SET password_encryption = 'scram-sha-256'"
	pg_reload=1
fi

# Connections the tests and benchmarks may hold at once, besides the 3
# reserved for superusers: the cluster-budget tests and bench/cluster's
# contenders 40 each (a budget of 40 across processes; a static split of
# 4 x 10), PgBouncer's 40 server connections (kept up to a minute after
# their last use), bench/pgx up to 6 pools of its -conns (48 at the default
# 8), the shoalpgx and cmd/shoal tests some 20, the checkers and psql a few.
# That is about 200 when they overlap, as they do with several engineers on
# one machine, so 300 leaves room; an unused slot costs PostgreSQL only some
# kilobytes of shared memory.
pg_max_conns=300
pg_restart=0
if [ "$(pg_admin -c 'SHOW max_connections')" -lt "$pg_max_conns" ]; then
	echo "    raising max_connections to $pg_max_conns (needs a restart)"
	pg_admin -c "ALTER SYSTEM SET max_connections = $pg_max_conns"
	pg_restart=1
fi

if [ "$pg_restart" = 1 ]; then
	pg_ctlcluster --skip-systemctl-redirect "$pg_ver" "$pg_name" restart
	wait_for "PostgreSQL (pg_isready -h 127.0.0.1)" "$pg_log" pg_ready
elif [ "$pg_reload" = 1 ]; then
	pg_admin -c 'SELECT pg_reload_conf()' >/dev/null
fi
hba_errors="$(pg_admin -c 'SELECT count(*) FROM pg_hba_file_rules WHERE error IS NOT NULL')"
[ "$hba_errors" = 0 ] || die "$hba has errors: $(pg_admin -c 'SELECT line_number, error FROM pg_hba_file_rules WHERE error IS NOT NULL')"

# Role and database. The password is (re)set on every run, hashed as SCRAM.
pg_admin <<'SQL'
DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'shoal') THEN
		CREATE ROLE shoal LOGIN;
	END IF;
END
$$;
SET password_encryption = 'scram-sha-256';
ALTER ROLE shoal WITH LOGIN PASSWORD 'shoal-secret';
SQL
if [ "$(pg_admin -c "SELECT count(*) FROM pg_database WHERE datname = 'shoal_test'")" = 0 ]; then
	pg_admin -c 'CREATE DATABASE shoal_test OWNER shoal'
fi
pg_admin -c 'ALTER DATABASE shoal_test OWNER TO shoal'

# Prove it: the right password gets in over TCP, a wrong one is refused.
pg_try() { PGPASSWORD="$1" PGCONNECT_TIMEOUT=5 psql -X -q -At -w -h 127.0.0.1 -p 5432 -U shoal -d shoal_test -c 'SELECT 1'; }
[ "$(pg_try shoal-secret 2>&1)" = 1 ] || die "shoal cannot log in to shoal_test over TCP: $(pg_try shoal-secret 2>&1)"
if pg_try not-the-password >/dev/null 2>&1; then
	die "a wrong password was accepted for shoal@127.0.0.1/shoal_test: the scram-sha-256 rule is not in effect"
fi
echo "    role shoal can log in to shoal_test with its password (SCRAM); a wrong password is refused"

# A role per tenant, for the test of many tenants under one cap
# (internal/integration): shoal_tenant_00 .. shoal_tenant_49, each a login
# with the one tenant password (SCRAM), a member of shoal_tenants (the
# pg_hba rules above name the group, not fifty roles), and the owner of a
# schema of its own name in shoal_test that is its search_path there. No
# tenant may use another's schema, nor create anything in public (a
# PostgreSQL 15 default, made explicit). The tests make and drop their own
# tables in these schemas, so nothing here depends on a run.
pg_tenants=50
pg_tenant_password=shoal-tenant-secret
pg_admin -v n="$pg_tenants" -v pw="$pg_tenant_password" <<'SQL'
SET client_min_messages = warning;
SET password_encryption = 'scram-sha-256';
SELECT 'CREATE ROLE shoal_tenants NOLOGIN'
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'shoal_tenants')
\gexec
CREATE TEMP TABLE tenant AS
SELECT format('shoal_tenant_%s', to_char(i, 'FM00')) AS r FROM generate_series(0, :n - 1) AS i;
SELECT format('CREATE ROLE %I', r) FROM tenant
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r)
\gexec
SELECT format('ALTER ROLE %I WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT PASSWORD %L', r, :'pw'),
	format('ALTER ROLE %I IN DATABASE shoal_test SET search_path = %I', r, r),
	format('GRANT shoal_tenants TO %I', r)
FROM tenant
\gexec
SQL
pg_admin -d shoal_test -v n="$pg_tenants" <<'SQL'
SET client_min_messages = warning;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT CONNECT ON DATABASE shoal_test TO shoal_tenants;
CREATE TEMP TABLE tenant AS
SELECT format('shoal_tenant_%s', to_char(i, 'FM00')) AS r FROM generate_series(0, :n - 1) AS i;
SELECT format('CREATE SCHEMA IF NOT EXISTS %I AUTHORIZATION %I', r, r),
	format('ALTER SCHEMA %I OWNER TO %I', r, r),
	format('REVOKE ALL ON SCHEMA %I FROM PUBLIC', r)
FROM tenant
\gexec
SQL

# Prove it: the last tenant gets in with the password over TCP and finds its
# schema first on its path, a wrong password is refused, and no tenant may
# use another's schema.
pg_tenant_last="$(printf 'shoal_tenant_%02d' $((pg_tenants - 1)))"
tenant_try() { PGPASSWORD="$1" PGCONNECT_TIMEOUT=5 psql -X -q -At -w -h 127.0.0.1 -p 5432 -U "$pg_tenant_last" -d shoal_test -c 'SELECT current_schema()'; }
[ "$(tenant_try "$pg_tenant_password" 2>&1)" = "$pg_tenant_last" ] ||
	die "$pg_tenant_last cannot log in to shoal_test over TCP with its schema on its path: $(tenant_try "$pg_tenant_password" 2>&1)"
if tenant_try not-the-password >/dev/null 2>&1; then
	die "a wrong password was accepted for $pg_tenant_last@127.0.0.1/shoal_test: the scram-sha-256 rule for +shoal_tenants is not in effect"
fi
tenant_leaks="$(pg_admin -d shoal_test -v n="$pg_tenants" <<'SQL'
SELECT count(*) FROM generate_series(0, :n - 1) AS a, generate_series(0, :n - 1) AS b
WHERE a <> b AND has_schema_privilege(format('shoal_tenant_%s', to_char(a, 'FM00')),
	format('shoal_tenant_%s', to_char(b, 'FM00')), 'USAGE');
SQL
)"
[ "$tenant_leaks" = 0 ] || die "$tenant_leaks pairs of tenant roles can use each other's schemas"
echo "    $pg_tenants tenant roles can log in to shoal_test (SCRAM), each to a schema of its own no other may use"

# ---------------------------------------------------------------------------
step "PostgreSQL HA pair"
# Two more clusters of the same version: a primary and a synchronous
# streaming standby of it, for the failover tests. The script that creates
# and repairs them is the one internal/pgpair runs to rebuild the pair after
# a test, so it lives beside that package.
SHOAL_PAIR_PG_VERSION="$pg_ver" SHOAL_PAIR_WAIT="$wait_secs" \
	bash "$here/../internal/pgpair/pair.sh" ensure
pair_try() { PGPASSWORD=shoal-secret PGCONNECT_TIMEOUT=5 psql -X -q -At -w -h 127.0.0.1 -p "$1" -U shoal -d shoal_test -c 'SELECT pg_is_in_recovery()'; }
[ "$(pair_try 5441 2>&1)" = f ] || die "shoal cannot log in to the primary 127.0.0.1:5441: $(pair_try 5441 2>&1)"
[ "$(pair_try 5442 2>&1)" = t ] || die "shoal cannot log in to the standby 127.0.0.1:5442: $(pair_try 5442 2>&1)"
echo "    role shoal can log in to shoal_test on both; 5441 writes, 5442 is in recovery"

# ---------------------------------------------------------------------------
step "ClickHouse"
# Settings layered over the package's config.xml: listen on IPv4 loopback only
# (by default 18.16 also binds ::1 and fails where IPv6 is off), no replication
# port, no query log, smaller caches.
ch_override=/etc/clickhouse-server/config.d/shoal.xml
ch_log=/var/log/clickhouse-server/clickhouse-server.err.log
ch_ready() { curl -fsS --max-time 2 http://127.0.0.1:8123/ping; }
ch_want='<?xml version="1.0"?>
<!-- Written by shoal'"'"'s scripts/services.sh: a loopback-only test server. -->
<yandex>
    <listen_host>127.0.0.1</listen_host>
    <interserver_http_port remove="1"/>
    <query_log remove="1"/>
    <mark_cache_size>268435456</mark_cache_size>
    <uncompressed_cache_size>268435456</uncompressed_cache_size>
</yandex>'
ch_restart=0
if [ "$(cat "$ch_override" 2>/dev/null || true)" != "$ch_want" ]; then
	echo "    writing $ch_override"
	mkdir -p "$(dirname "$ch_override")"
	printf '%s\n' "$ch_want" >"$ch_override"
	ch_restart=1
fi
install -d -o clickhouse -g clickhouse /var/lib/clickhouse /var/log/clickhouse-server
if [ "$ch_restart" = 1 ] && ch_ready >/dev/null 2>&1; then
	echo "    restarting to apply the new settings"
	start-stop-daemon --stop --quiet --oknodo --retry TERM/30/KILL/5 \
		--user clickhouse --exec /usr/sbin/clickhouse-server
fi
if ! ch_ready >/dev/null 2>&1; then
	echo "    starting clickhouse-server"
	start-stop-daemon --start --quiet --oknodo --background \
		--chuid clickhouse:clickhouse --chdir /var/lib/clickhouse \
		--user clickhouse --exec /usr/sbin/clickhouse-server \
		--output /var/log/clickhouse-server/stdout.log \
		-- --config=/etc/clickhouse-server/config.xml
fi
wait_for "ClickHouse (http://127.0.0.1:8123/ping)" "$ch_log" ch_ready

# ---------------------------------------------------------------------------
step "InfluxDB"
# The package's config, with these overrides through influxd's environment:
# HTTP on loopback only, no usage reporting, no self-monitoring writes, quiet.
influx_log=/var/log/influxdb/influxd.log
influx_ready() { curl -fsS --max-time 2 http://127.0.0.1:8086/ping; }
install -d -o influxdb -g influxdb /var/lib/influxdb /var/log/influxdb
if ! influx_ready >/dev/null 2>&1; then
	echo "    starting influxd"
	touch "$influx_log" && chown influxdb:influxdb "$influx_log"
	env INFLUXDB_HTTP_BIND_ADDRESS=127.0.0.1:8086 \
		INFLUXDB_BIND_ADDRESS=127.0.0.1:8088 \
		INFLUXDB_REPORTING_DISABLED=true \
		INFLUXDB_MONITOR_STORE_ENABLED=false \
		INFLUXDB_HTTP_LOG_ENABLED=false \
		INFLUXDB_DATA_QUERY_LOG_ENABLED=false \
		start-stop-daemon --start --quiet --oknodo --background \
		--chuid influxdb:influxdb --chdir /var/lib/influxdb \
		--user influxdb --exec /usr/bin/influxd \
		--output "$influx_log" \
		-- -config /etc/influxdb/influxdb.conf
fi
wait_for "InfluxDB (http://127.0.0.1:8086/ping)" "$influx_log" influx_ready
curl -fsS --max-time 10 -XPOST http://127.0.0.1:8086/query \
	--data-urlencode 'q=CREATE DATABASE shoal_test' >/dev/null
echo "    database shoal_test exists"

# ---------------------------------------------------------------------------
step "etcd"
# A single-member cluster of its own, data under /var/lib/shoal-etcd. The
# tests put and delete 100,000 keys a run; compacting every 5 minutes lets
# etcd reuse the space of old revisions instead of growing towards its quota.
etcd_data=/var/lib/shoal-etcd
etcd_log=/var/log/shoal-etcd.log
etcd_ready() { curl -fsS --max-time 2 http://127.0.0.1:2379/health | grep -q '"health":"true"'; }
install -d -o etcd -g etcd -m 700 "$etcd_data"
if ! etcd_ready >/dev/null 2>&1 && ! ours /run/shoal-etcd.pid "$etcd_data"; then
	echo "    starting etcd"
	touch "$etcd_log" && chown etcd:etcd "$etcd_log"
	# A pidfile of its own: the cluster below runs the same binary as the
	# same user, and start-stop-daemon would take one of its members for
	# this server and start nothing.
	start-stop-daemon --start --quiet --oknodo --background \
		--make-pidfile --pidfile /run/shoal-etcd.pid \
		--chuid etcd:etcd --chdir "$etcd_data" \
		--user etcd --exec /usr/bin/etcd \
		--output "$etcd_log" \
		-- --name shoal \
		--data-dir "$etcd_data" \
		--listen-client-urls http://127.0.0.1:2379 \
		--advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 \
		--initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster shoal=http://127.0.0.1:2380 \
		--initial-cluster-state new \
		--max-concurrent-streams 100 \
		--snapshot-count 10000 \
		--auto-compaction-mode periodic --auto-compaction-retention 5m \
		--logger zap --log-outputs stderr --log-level warn
fi
wait_for "etcd (http://127.0.0.1:2379/health)" "$etcd_log" etcd_ready

# ---------------------------------------------------------------------------
step "etcd cluster"
# Three members on loopback, for the tests that need a quorum to lose: member
# N serves clients on 238N and its peers on 239N, keeps its data under
# /var/lib/shoal-etcd-cluster/N and its pid in /run/shoal-etcd-cluster-N.pid.
# Once a member's data directory exists etcd ignores the --initial-* flags, so
# the same command restarts a member that stopped.
cluster_data=/var/lib/shoal-etcd-cluster
cluster_peers="shoal-c1=http://127.0.0.1:2391,shoal-c2=http://127.0.0.1:2392,shoal-c3=http://127.0.0.1:2393"
member_ready() { curl -fsS --max-time 2 "http://127.0.0.1:238$1/health" | grep -q '"health":"true"'; }
install -d -o etcd -g etcd -m 700 "$cluster_data"
# Start every member that is not running before waiting on any: a lone member
# has no leader, so it cannot answer healthy until a second one is up.
for n in 1 2 3; do
	member_log="/var/log/shoal-etcd-cluster-$n.log"
	member_pid="/run/shoal-etcd-cluster-$n.pid"
	if member_ready "$n" >/dev/null 2>&1 || ours "$member_pid" "shoal-c$n"; then
		continue
	fi
	echo "    starting member shoal-c$n"
	install -d -o etcd -g etcd -m 700 "$cluster_data/$n"
	touch "$member_log" && chown etcd:etcd "$member_log"
	start-stop-daemon --start --quiet --oknodo --background \
		--make-pidfile --pidfile "$member_pid" \
		--chuid etcd:etcd --chdir "$cluster_data/$n" \
		--user etcd --exec /usr/bin/etcd \
		--output "$member_log" \
		-- --name "shoal-c$n" \
		--data-dir "$cluster_data/$n" \
		--listen-client-urls "http://127.0.0.1:238$n" \
		--advertise-client-urls "http://127.0.0.1:238$n" \
		--listen-peer-urls "http://127.0.0.1:239$n" \
		--initial-advertise-peer-urls "http://127.0.0.1:239$n" \
		--initial-cluster "$cluster_peers" \
		--initial-cluster-token shoal-etcd-cluster \
		--initial-cluster-state new \
		--max-concurrent-streams 100 \
		--snapshot-count 10000 \
		--auto-compaction-mode periodic --auto-compaction-retention 5m \
		--logger zap --log-outputs stderr --log-level warn
done
for n in 1 2 3; do
	wait_for "etcd member shoal-c$n (http://127.0.0.1:238$n/health)" \
		"/var/log/shoal-etcd-cluster-$n.log" member_ready "$n"
done

# ---------------------------------------------------------------------------
step "PgBouncer"
# Transaction pooling in front of shoal_test: at most 40 server connections
# (8 under the name shoal_test_pool8, which bench/pgx's pipeline set uses),
# logged into as shoal over PostgreSQL's Unix socket (SCRAM, the "local" rule
# above), so that they are the shoal backends whose client_port is -1 and a
# benchmark can count them at the server whatever application_name their
# last client set. Clients log in to PgBouncer with SCRAM too: the plain-text
# password in the auth file serves both directions. It runs as postgres, the
# owner of the socket directory, from its own files, beside (not instead of)
# the package's /etc/pgbouncer.
pgb_dir=/etc/shoal-pgbouncer
pgb_ini="$pgb_dir/pgbouncer.ini"
pgb_users="$pgb_dir/userlist.txt"
pgb_log=/var/log/shoal-pgbouncer.log
pgb_run=/run/shoal-pgbouncer
pgb_pid="$pgb_run/pgbouncer.pid"
pgb_try() { PGPASSWORD="$1" PGCONNECT_TIMEOUT=5 psql -X -q -At -w -h 127.0.0.1 -p 6432 -U shoal -d shoal_test -c 'SELECT 1'; }
pgb_ready() { [ "$(pgb_try shoal-secret 2>/dev/null)" = 1 ]; }
pgb_ini_want="; Written by shoal's scripts/services.sh: a loopback-only test pooler.
[databases]
shoal_test = host=/var/run/postgresql port=5432 dbname=shoal_test user=shoal
; The same database with a server pool of 8, for bench/pgx's pipeline set.
shoal_test_pool8 = host=/var/run/postgresql port=5432 dbname=shoal_test user=shoal pool_size=8

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = 6432
; No Unix socket of its own: clients come over TCP only.
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $pgb_users
pool_mode = transaction
default_pool_size = 40
reserve_pool_size = 0
max_db_connections = 40
max_client_conn = 1000
; Give idle server connections back after a minute, not the default ten.
server_idle_timeout = 60
; lib/pq and JDBC send it at startup; PgBouncer refuses unknown parameters.
ignore_startup_parameters = extra_float_digits
logfile = $pgb_log
pidfile = $pgb_pid
log_connections = 0
log_disconnections = 0"
pgb_users_want='"shoal" "shoal-secret"'
install -d -o postgres -g postgres -m 750 "$pgb_dir"
install -d -o postgres -g postgres -m 755 "$pgb_run"
pgb_changed=0
if [ "$(cat "$pgb_ini" 2>/dev/null || true)" != "$pgb_ini_want" ]; then
	echo "    writing $pgb_ini"
	printf '%s\n' "$pgb_ini_want" >"$pgb_ini"
	pgb_changed=1
fi
if [ "$(cat "$pgb_users" 2>/dev/null || true)" != "$pgb_users_want" ]; then
	echo "    writing $pgb_users"
	printf '%s\n' "$pgb_users_want" >"$pgb_users"
	pgb_changed=1
fi
chown postgres:postgres "$pgb_ini" "$pgb_users"
chmod 640 "$pgb_ini"
chmod 600 "$pgb_users"
touch "$pgb_log" && chown postgres:postgres "$pgb_log"
pgb_running() { ours "$pgb_pid" "$pgb_ini"; }
if [ "$pgb_changed" = 1 ] && pgb_running; then
	# SIGHUP rereads both files; the listen address needs no restart as
	# long as it stays 127.0.0.1:6432.
	echo "    reloading PgBouncer"
	kill -HUP "$(cat "$pgb_pid")"
fi
if ! pgb_running; then
	echo "    starting pgbouncer"
	# -q keeps its errors out of our output; they are in its log.
	runuser -u postgres -- /usr/sbin/pgbouncer -d -q "$pgb_ini" ||
		die "pgbouncer did not start; the end of $pgb_log: $(tail -n 20 "$pgb_log")"
fi
wait_for "PgBouncer (psql -h 127.0.0.1 -p 6432)" "$pgb_log" pgb_ready
if pgb_try not-the-password >/dev/null 2>&1; then
	die "PgBouncer accepted a wrong password for shoal"
fi
echo "    role shoal gets through PgBouncer to shoal_test with its password; a wrong one is refused"

# ---------------------------------------------------------------------------
step "ready after ${SECONDS}s; the tests read (also in scripts/test-env.sh):"
grep '^export ' "$here/test-env.sh"
