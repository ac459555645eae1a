package main

// pgRoomQuery reads what the sweep's preflight compares --max-conns with:
// max_connections, the slots reserved from it, the client backends open
// other than the preflight's own, which leaves before the sweep dials
// (leavePG), and the role's CONNECTION LIMIT.
//
// A role without pg_read_all_stats sees another role's sessions in
// pg_stat_activity with their backend_type hidden, so that counting
// 'client backend' alone would miss them. Such a row with a user and a
// database is counted as a client backend: the other processes it may be
// (a parallel worker, a logical replication worker or walsender) would
// only make the room counted smaller than it is, never larger.
const pgRoomQuery = `select current_setting('max_connections')::int,
	current_setting('superuser_reserved_connections')::int + coalesce(current_setting('reserved_connections', true)::int, 0),
	(select count(*) from pg_stat_activity
		where pid <> pg_backend_pid() and usesysid is not null and datid is not null
		and coalesce(backend_type, 'client backend') = 'client backend'),
	coalesce((select rolconnlimit from pg_roles where rolname = current_user), -1)`
