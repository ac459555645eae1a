#!/usr/bin/env bash
# The PostgreSQL pair of the high-availability tests: a primary on
# 127.0.0.1:5441 and a synchronous streaming standby of it on 127.0.0.1:5442,
# two Debian clusters (pg_createcluster) named shoal_ha_5441 and
# shoal_ha_5442, each with the role shoal (password shoal-secret, SCRAM over
# TCP) and the database shoal_test that the main cluster has.
#
#   pair.sh ensure    create, configure and start what is missing; rebuild
#                     the pair when it is not primary 5441 + standby 5442
#                     streaming synchronously (fast when it already is)
#   pair.sh rebuild   make 5441 the primary again (starting or promoting it)
#                     and 5442 a fresh standby of it (pg_basebackup -R)
#   pair.sh status    exit 0 when the pair is healthy, else say why
#   pair.sh promote PORT        promote the standby on PORT, wait until it writes
#   pair.sh stop PORT [MODE]    stop the server on PORT (pg_ctl's -m: fast,
#                               immediate or smart; default fast)
#   pair.sh start PORT          start the server on PORT, wait until it answers
#   pair.sh rejoin PORT         bring the server on PORT back as a standby of the
#                               other one, the promoted standby (pg_rewind -R)
#   pair.sh readonly PORT on|off
#                               default_transaction_read_only for every
#                               session of the server on PORT, open ones too
#                               (from their next statement): a primary
#                               fenced while its clients stay connected
#   pair.sh replay PORT pause|resume
#                               pause or resume WAL replay on the standby on
#                               PORT: it goes on receiving and falls behind
#
# scripts/services.sh runs "ensure"; package internal/pgpair embeds this file
# and runs "rebuild" after a test has promoted, stopped or demoted a server,
# so the pair's life is written down once. Runs as root (the servers run as
# postgres) or as postgres. Every wait is bounded by SHOAL_PAIR_WAIT seconds.
set -euo pipefail

ver="${SHOAL_PAIR_PG_VERSION:-15}"
primary_port="${SHOAL_PAIR_PRIMARY_PORT:-5441}"
standby_port="${SHOAL_PAIR_STANDBY_PORT:-5442}"
wait_secs="${SHOAL_PAIR_WAIT:-30}"
socket_dir=/var/run/postgresql

say() { printf '    %s\n' "$*"; }
die() { printf 'pair.sh: error: %s\n' "$*" >&2; exit 1; }

name_of() { printf 'shoal_ha_%s' "$1"; }
conf_of() { printf '/etc/postgresql/%s/%s' "$ver" "$(name_of "$1")"; }
data_of() { printf '/var/lib/postgresql/%s/%s' "$ver" "$(name_of "$1")"; }
log_of() { printf '/var/log/postgresql/postgresql-%s-%s.log' "$ver" "$(name_of "$1")"; }

# as_pg CMD...: run CMD as the postgres user, from / (runuser keeps the
# caller's directory, which postgres may not be allowed to read).
as_pg() {
	if [ "$(id -u)" = 0 ]; then
		(cd / && runuser -u postgres -- "$@")
	elif [ "$(id -un)" = postgres ]; then
		(cd / && "$@")
	else
		die "must run as root or postgres (is $(id -un))"
	fi
}

# sql PORT SQL: one statement as the superuser over the Unix socket; prints
# the result unaligned. Its commits do not wait for a synchronous standby,
# which may not exist yet.
sql() {
	as_pg env PGCONNECT_TIMEOUT=5 PGOPTIONS='-c synchronous_commit=local' psql -X -q -At -v ON_ERROR_STOP=1 \
		-h "$socket_dir" -p "$1" -d postgres -c "$2"
}

exists() { pg_lsclusters -h | awk -v n="$(name_of "$1")" -v v="$ver" '$1 == v && $2 == n {f = 1} END {exit !f}'; }
# running PORT: the server's postmaster is alive, that is the first line of
# its postmaster.pid names a process started on its data directory.
# pg_lsclusters would trust any process whose command line says "postgres",
# and a machine brought back from an image keeps the pid files of servers
# that are gone, whose pids a backend of another server may have now.
running() {
	local data pid
	data="$(data_of "$1")"
	pid="$(head -n 1 "$data/postmaster.pid" 2>/dev/null || true)"
	[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] &&
		tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qxF -- "$data"
}
ready() { pg_isready -q -h 127.0.0.1 -p "$1" -t 2; }
in_recovery() { [ "$(sql "$1" 'SELECT pg_is_in_recovery()')" = t ]; }
out_of_recovery() { [ "$(sql "$1" 'SELECT pg_is_in_recovery()')" = f ]; }

ctl() {
	local port="$1"
	shift
	pg_ctlcluster --skip-systemctl-redirect "$ver" "$(name_of "$port")" "$@"
}

# launch PORT: start a server that is not running, first removing the pid
# and lock files a server that is gone left behind: pg_ctlcluster (through
# the external pid file) and postgres (through postmaster.pid and the
# socket's lock file) each refuse to start while such a file names a live
# process, whichever it is.
launch() {
	local port="$1"
	rm -f "$(data_of "$port")/postmaster.pid" "$socket_dir/$ver-$(name_of "$port").pid" \
		"$socket_dir/.s.PGSQL.$port.lock"
	ctl "$port" start
}

# wait_for WHAT PORT CMD...: retry CMD every 100ms until it succeeds; after
# $wait_secs seconds fail with the end of PORT's server log.
wait_for() {
	local what="$1" port="$2"
	shift 2
	local deadline=$((SECONDS + wait_secs))
	until "$@" >/dev/null 2>&1; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			printf 'pair.sh: error: %s: not within %ss\n' "$what" "$wait_secs" >&2
			printf -- '--- last lines of %s ---\n' "$(log_of "$port")" >&2
			tail -n 20 "$(log_of "$port")" >&2 || true
			exit 1
		fi
		sleep 0.1
	done
}

start() {
	local port="$1"
	running "$port" || launch "$port"
	wait_for "$(name_of "$port") accepting connections on 127.0.0.1:$port" "$port" ready "$port"
}

# The settings both servers share. wal_log_hints lets pg_rewind bring a
# demoted primary back as a standby, and wal_keep_size keeps the WAL it
# reads back to the last checkpoint before the two diverged; the rest
# keeps two extra servers small. synchronous_standby_names is in the primary's file only: a promoted
# standby must not wait for a standby it does not have.
settings() {
	cat <<EOF
# Written by shoal's internal/pgpair/pair.sh: one of the loopback HA pair.
listen_addresses = '127.0.0.1'
port = $1
max_connections = 200
shared_buffers = 32MB
wal_level = replica
wal_log_hints = on
wal_keep_size = 256MB
max_wal_senders = 4
max_replication_slots = 4
hot_standby = on
wal_receiver_status_interval = 1s
autovacuum = off
log_min_messages = warning
EOF
	if [ "$1" = "$primary_port" ]; then
		echo "synchronous_standby_names = '*'"
	fi
}

# The superuser and replication come over the Unix socket as postgres (peer);
# the test role only over loopback TCP with its password.
hba() {
	cat <<'EOF'
# Written by shoal's internal/pgpair/pair.sh: one of the loopback HA pair.
local   all             postgres                                peer
local   replication     postgres                                peer
host    shoal_test      shoal           127.0.0.1/32            scram-sha-256
host    shoal_test      shoal           ::1/128                 scram-sha-256
EOF
}

# configure PORT: write the cluster's settings and rules; prints "restart"
# when they changed (a running server must restart to apply them).
configure() {
	local port="$1" conf
	conf="$(conf_of "$port")"
	local changed=0
	if [ "$(cat "$conf/conf.d/shoal-pair.conf" 2>/dev/null || true)" != "$(settings "$port")" ]; then
		settings "$port" >"$conf/conf.d/shoal-pair.conf"
		changed=1
	fi
	if [ "$(cat "$conf/pg_hba.conf")" != "$(hba)" ]; then
		hba >"$conf/pg_hba.conf"
		changed=1
	fi
	chown postgres:postgres "$conf/conf.d/shoal-pair.conf" "$conf/pg_hba.conf"
	if [ "$changed" = 1 ]; then echo restart; fi
}

create() {
	local port="$1"
	exists "$port" && return 0
	say "creating cluster $ver/$(name_of "$port") on port $port"
	pg_createcluster --start-conf=manual "$ver" "$(name_of "$port")" -p "$port" >/dev/null
	mkdir -p "$(conf_of "$port")/conf.d"
}

# role_and_db: on the primary, the role and database the tests log in to.
role_and_db() {
	sql "$primary_port" "DO \$\$ BEGIN
		IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'shoal') THEN CREATE ROLE shoal LOGIN; END IF;
	END \$\$" >/dev/null
	sql "$primary_port" "SET password_encryption = 'scram-sha-256'; ALTER ROLE shoal WITH LOGIN PASSWORD 'shoal-secret'" >/dev/null
	if [ "$(sql "$primary_port" "SELECT count(*) FROM pg_database WHERE datname = 'shoal_test'")" = 0 ]; then
		sql "$primary_port" 'CREATE DATABASE shoal_test OWNER shoal' >/dev/null
	fi
}

# rejoin PORT: stop the server on PORT (an old primary), rewind it onto the
# timeline of the other server (which must be a primary by now) and start
# it as that server's standby; returns once it streams.
rejoin() {
	local port="$1" other
	if [ "$port" = "$primary_port" ]; then other="$standby_port"; else other="$primary_port"; fi
	out_of_recovery "$other" || die "127.0.0.1:$other is not a primary: nothing to rejoin"
	if running "$port"; then ctl "$port" stop -m fast; fi
	# Debian puts no pg_rewind wrapper on PATH.
	as_pg "/usr/lib/postgresql/$ver/bin/pg_rewind" --target-pgdata="$(data_of "$port")" \
		--source-server="host=$socket_dir port=$other user=postgres dbname=postgres" \
		--write-recovery-conf >/dev/null
	# A server that had not diverged needs no rewind, and pg_rewind then
	# may leave it as it was; it must follow the other server all the same.
	local data
	data="$(data_of "$port")"
	as_pg touch "$data/standby.signal"
	if ! grep -q "port=$other" "$data/postgresql.auto.conf" 2>/dev/null; then
		printf "primary_conninfo = 'host=%s port=%s user=postgres'\n" "$socket_dir" "$other" |
			as_pg tee -a "$data/postgresql.auto.conf" >/dev/null
	fi
	start "$port"
	wait_for "127.0.0.1:$port streaming from 127.0.0.1:$other" "$port" follows "$port" "$other"
}

# follows PORT OTHER: the server on PORT is in recovery and streams from OTHER.
follows() {
	in_recovery "$1" &&
		sql "$1" "SELECT conninfo FROM pg_stat_wal_receiver WHERE status = 'streaming'" | grep -q "port=$2"
}

# read_only PORT on|off: set default_transaction_read_only in the server's
# postgresql.auto.conf and reload; returns once a new session sees it,
# which means the postmaster has reloaded and signalled every session (each
# applies it before its next statement).
read_only() {
	local port="$1" want="$2"
	if [ "$want" = on ]; then
		sql "$port" 'ALTER SYSTEM SET default_transaction_read_only = on' >/dev/null
	else
		sql "$port" 'ALTER SYSTEM RESET default_transaction_read_only' >/dev/null
	fi
	sql "$port" 'SELECT pg_reload_conf()' >/dev/null
	wait_for "127.0.0.1:$port default_transaction_read_only = $want" "$port" read_only_is "$port" "$want"
}
read_only_is() { [ "$(sql "$1" 'SHOW default_transaction_read_only')" = "$2" ]; }

# streaming: the primary has a synchronous standby streaming from it, and it
# is the one on the standby port.
streaming() {
	[ "$(sql "$primary_port" "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = 'sync'")" -ge 1 ] &&
		sql "$standby_port" "SELECT conninfo FROM pg_stat_wal_receiver WHERE status = 'streaming'" | grep -q "port=$primary_port"
}

# why_not prints what keeps the pair from being healthy, or nothing.
why_not() {
	local p
	for p in "$primary_port" "$standby_port"; do
		exists "$p" || { echo "no cluster $ver/$(name_of "$p")"; return; }
		ready "$p" || { echo "127.0.0.1:$p does not accept connections"; return; }
	done
	in_recovery "$primary_port" && { echo "127.0.0.1:$primary_port is in recovery (a standby)"; return; }
	in_recovery "$standby_port" || { echo "127.0.0.1:$standby_port is not in recovery (a primary)"; return; }
	[ "$(sql "$standby_port" 'SELECT pg_is_wal_replay_paused()')" = f ] ||
		{ echo "127.0.0.1:$standby_port has its replay paused"; return; }
	read_only_is "$primary_port" off || { echo "127.0.0.1:$primary_port has default_transaction_read_only on"; return; }
	streaming || { echo "127.0.0.1:$standby_port is not streaming synchronously from 127.0.0.1:$primary_port"; return; }
	[ "$(sql "$primary_port" "SELECT count(*) FROM pg_roles WHERE rolname = 'shoal'")" = 1 ] ||
		{ echo "no role shoal on 127.0.0.1:$primary_port"; return; }
	[ "$(sql "$primary_port" "SELECT count(*) FROM pg_database WHERE datname = 'shoal_test'")" = 1 ] ||
		{ echo "no database shoal_test on 127.0.0.1:$primary_port"; return; }
}

rebuild() {
	# The primary first: running, and out of recovery if a test demoted it.
	start "$primary_port"
	if in_recovery "$primary_port"; then
		say "promoting 127.0.0.1:$primary_port back to primary"
		ctl "$primary_port" promote >/dev/null
		wait_for "127.0.0.1:$primary_port leaving recovery" "$primary_port" out_of_recovery "$primary_port"
	fi
	# A test may have fenced it; the standby copies this setting too.
	read_only_is "$primary_port" off || read_only "$primary_port" off
	role_and_db
	# Then a fresh standby: whatever it was, its data goes.
	if running "$standby_port"; then
		ctl "$standby_port" stop -m immediate
	fi
	local data
	data="$(data_of "$standby_port")"
	[ -n "$data" ] && [ "$data" != / ] || die "no data directory for the standby"
	rm -rf "$data"
	install -d -o postgres -g postgres -m 700 "$data"
	as_pg pg_basebackup -h "$socket_dir" -p "$primary_port" -U postgres -D "$data" \
		-R -X stream -c fast
	start "$standby_port"
	wait_for "127.0.0.1:$standby_port streaming synchronously from 127.0.0.1:$primary_port" "$standby_port" streaming
}

ensure() {
	local restart_p restart_s new_standby=0
	create "$primary_port"
	exists "$standby_port" || new_standby=1
	create "$standby_port"
	restart_p="$(configure "$primary_port")"
	restart_s="$(configure "$standby_port")"
	if [ "$restart_p" = restart ] && running "$primary_port"; then
		say "restarting 127.0.0.1:$primary_port for its new settings"
		ctl "$primary_port" restart
	fi
	if [ "$restart_s" = restart ] && running "$standby_port"; then
		say "restarting 127.0.0.1:$standby_port for its new settings"
		ctl "$standby_port" restart
	fi
	start "$primary_port"
	# A new standby holds an initdb of its own, not a copy of the primary:
	# the rebuild below replaces it. An old one that does not start is
	# rebuilt too; one that does gets a few seconds to reach the primary.
	if [ "$new_standby" = 0 ] && ! running "$standby_port"; then
		if launch "$standby_port"; then
			local until=$((SECONDS + 10))
			while [ "$SECONDS" -lt "$until" ] && ! streaming >/dev/null 2>&1; do sleep 0.1; done
		else
			say "127.0.0.1:$standby_port did not start"
		fi
	fi
	local why
	why="$(why_not)"
	if [ "$new_standby" = 1 ] || [ -n "$why" ]; then
		[ "$new_standby" = 1 ] && why="a new standby"
		say "rebuilding the pair: $why"
		rebuild
		why="$(why_not)"
		[ -z "$why" ] || die "the pair is still not healthy after a rebuild: $why"
	fi
	say "primary 127.0.0.1:$primary_port, synchronous standby 127.0.0.1:$standby_port"
}

# port_arg PORT: PORT must be one of the pair's.
port_arg() {
	[ "${1:-}" = "$primary_port" ] || [ "${1:-}" = "$standby_port" ] ||
		die "no server of the pair on port '${1:-}' (the pair is $primary_port and $standby_port)"
}

case "${1:-}" in
ensure) ensure ;;
promote)
	port_arg "${2:-}"
	in_recovery "$2" || die "127.0.0.1:$2 is not a standby"
	ctl "$2" promote >/dev/null
	wait_for "127.0.0.1:$2 leaving recovery" "$2" out_of_recovery "$2"
	;;
stop)
	port_arg "${2:-}"
	case "${3:-fast}" in fast | immediate | smart) ;; *) die "stop mode '${3}' is not fast, immediate or smart" ;; esac
	if running "$2"; then ctl "$2" stop -m "${3:-fast}"; fi
	;;
start)
	port_arg "${2:-}"
	start "$2"
	;;
rejoin)
	port_arg "${2:-}"
	rejoin "$2"
	;;
readonly)
	port_arg "${2:-}"
	case "${3:-}" in on | off) ;; *) die "readonly takes on or off, not '${3:-}'" ;; esac
	read_only "$2" "$3"
	;;
replay)
	port_arg "${2:-}"
	case "${3:-}" in
	pause) sql "$2" 'SELECT pg_wal_replay_pause()' >/dev/null ;;
	resume) sql "$2" 'SELECT pg_wal_replay_resume()' >/dev/null ;;
	*) die "replay takes pause or resume, not '${3:-}'" ;;
	esac
	;;
rebuild)
	rebuild
	why="$(why_not)"
	[ -z "$why" ] || die "the pair is not healthy after a rebuild: $why"
	;;
status)
	why="$(why_not)"
	[ -z "$why" ] || { echo "$why"; exit 1; }
	;;
*) die "usage: pair.sh ensure|rebuild|status|promote PORT|stop PORT [MODE]|start PORT|rejoin PORT|readonly PORT on|off|replay PORT pause|resume" ;;
esac
