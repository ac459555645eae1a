#!/usr/bin/env bash
# Installs (from Debian's packages) and starts every real server that shoal's
# integration tests talk to, then prints the environment the tests read:
#
#   PostgreSQL  127.0.0.1:5432  role shoal / db shoal_test, password auth (SCRAM)
#   ClickHouse  127.0.0.1:8123  HTTP interface (native protocol on 127.0.0.1:9000)
#   InfluxDB    127.0.0.1:8086  HTTP API, database shoal_test
#   etcd        127.0.0.1:2379  client URL (peer URL 127.0.0.1:2380)
#
# Runs as root on Debian bookworm, without systemd: every server is started
# directly as a background daemon, listening on loopback only. Safe to run any
# number of times: it installs only what is missing, starts only servers that
# do not answer yet and changes PostgreSQL's configuration only when needed.
#
# Logs: PostgreSQL /var/log/postgresql/, ClickHouse /var/log/clickhouse-server/,
# InfluxDB /var/log/influxdb/influxd.log, etcd /var/log/shoal-etcd.log.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Seconds to wait for each server to answer before giving up.
wait_secs="${SHOAL_SERVICES_WAIT:-60}"

step() { printf '==> %s\n' "$*"; }
die() { printf 'services.sh: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root"

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
packages=(curl postgresql clickhouse-server clickhouse-client influxdb etcd-server etcd-client)
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
read -r pg_ver pg_name _ < <(pg_lsclusters -h | awk '$3 == 5432 {print; exit}') ||
	die "no PostgreSQL cluster on port 5432 (pg_lsclusters shows: $(pg_lsclusters -h))"
pg_conf="/etc/postgresql/$pg_ver/$pg_name"
pg_log="/var/log/postgresql/postgresql-$pg_ver-$pg_name.log"
pg_ready() { pg_isready -q -h 127.0.0.1 -p 5432; }
# Administrative SQL goes over the Unix socket as the postgres superuser, which
# works with Debian's default "peer" rule as well as with "trust".
pg_admin() { (cd / && runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"); }

if ! pg_ready; then
	echo "    starting cluster $pg_ver/$pg_name"
	pg_ctlcluster --skip-systemctl-redirect "$pg_ver" "$pg_name" start || true
fi
wait_for "PostgreSQL (pg_isready -h 127.0.0.1)" "$pg_log" pg_ready

# Password connections must really cost a SCRAM exchange, so the test role
# gets scram-sha-256 rules placed before any other host rule (the first
# matching line wins, and this machine has "host all all 127.0.0.1/32 trust").
# Other roles and databases keep whatever access they had.
hba="$pg_conf/pg_hba.conf"
export SHOAL_HBA_BLOCK="# shoal integration tests: password (SCRAM) over TCP (scripts/services.sh)
host    shoal_test      shoal           127.0.0.1/32            scram-sha-256
host    shoal_test      shoal           ::1/128                 scram-sha-256"
hba_new="$(awk '
	BEGIN { block = ENVIRON["SHOAL_HBA_BLOCK"]; split(block, b, "\n"); marker = b[1] }
	$0 == marker { next }                                  # drop an older copy
	/^[ \t]*host[ \t]+shoal_test[ \t]+shoal[ \t]/ { next } # of our block
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

pg_restart=0
if [ "$(pg_admin -c 'SHOW max_connections')" -lt 200 ]; then
	echo "    raising max_connections to 200 (needs a restart)"
	pg_admin -c "ALTER SYSTEM SET max_connections = 200"
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
if ! etcd_ready >/dev/null 2>&1; then
	echo "    starting etcd"
	touch "$etcd_log" && chown etcd:etcd "$etcd_log"
	start-stop-daemon --start --quiet --oknodo --background \
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
step "ready after ${SECONDS}s; the tests read (also in scripts/test-env.sh):"
grep '^export ' "$here/test-env.sh"
