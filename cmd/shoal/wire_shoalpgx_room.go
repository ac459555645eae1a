package main

// pgRoomQuery reads what the sweep's preflight compares --max-conns with,
// for the role it logged in as (session_user, which the server's limits
// count, whatever role the session has set since): max_connections and
// the slots reserved from it, the role's CONNECTION LIMIT and the
// database's, and the connections open against each, other than the
// preflight's own, which leaves before the sweep dials (leavePG).
//
// A superuser may take the reserved slots and is held to neither
// CONNECTION LIMIT; a member of pg_use_reserved_connections may take the
// slots of reserved_connections.
//
// A role without pg_read_all_stats sees another role's sessions in
// pg_stat_activity with their backend_type hidden, so that counting
// 'client backend' alone would miss them. Such a row with a user and a
// database is counted as a client backend: the other processes it may be
// (a parallel worker, a logical replication worker or walsender) would
// only make the room counted smaller than it is, never larger. The role's
// own sessions show their backend_type; the role's and the database's
// limits count walsenders as the server does.
const pgRoomQuery = `with me as (
	select oid, rolname, rolsuper, rolconnlimit from pg_roles where rolname = session_user
), db as (
	select oid, datname, datconnlimit from pg_database where datname = current_database()
), others as (
	select datid, usesysid, coalesce(backend_type, 'client backend') as backend_type
	from pg_stat_activity where pid <> pg_backend_pid() and usesysid is not null
)
select current_setting('max_connections')::int,
	case when me.rolsuper then 0 else current_setting('superuser_reserved_connections')::int +
		case when to_regrole('pg_use_reserved_connections') is not null
			and pg_has_role(session_user, to_regrole('pg_use_reserved_connections'), 'usage') then 0
		else coalesce(current_setting('reserved_connections', true)::int, 0) end
	end,
	(select count(*) from others where datid is not null and backend_type = 'client backend'),
	me.rolname,
	case when me.rolsuper then -1 else me.rolconnlimit end,
	(select count(*) from others where usesysid = me.oid and backend_type in ('client backend', 'walsender')),
	db.datname,
	case when me.rolsuper then -1 else db.datconnlimit end,
	(select count(*) from others where datid = db.oid and backend_type in ('client backend', 'walsender'))
from me, db`
