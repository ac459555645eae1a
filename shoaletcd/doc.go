// Package shoaletcd keeps a shoal.Budget in etcd: one limit on connections
// (N, Options.Size) shared by pools in many processes, so that N instances
// of a service never open more than N connections to a server between
// them, e.g. PostgreSQL's max_connections less a reserve, without a proxy
// tier in between.
//
//	b, err := shoaletcd.New(ctx, etcdClient, shoaletcd.Options{Name: "orders-db", Size: 90, Min: 2})
//	...
//	defer b.Close()
//	pool, err := shoal.New(shoal.Config[*Conn]{..., Budget: b})
//
// # How it works
//
// A budget lives under Prefix+Name+"/" (see Read for a look at it):
//
//	size         N, written by the first member; members alive must agree
//	members/ID   each member's record (host, pid, label, Min, smoothed demand, pools), under its lease
//	slots/I      for I in [0, N): the ID of the member holding slot I, under its lease
//
// A permit is the ownership of a slot key, and a slot key is created only
// by a transaction that requires it not to exist, so etcd never holds more
// than N of them: that is the whole safety argument, and it does not
// depend on the members agreeing on anything else.
//
// Shares are an efficiency matter on top. Every member watches the budget
// and computes everybody's share from the same member records with
// max-min fairness (every minimum first, the rest water-filled by demand,
// what is left spread so the shares sum to N, ties to the lower ID; a
// member's pools divide its share keeping first what each holds), and
// tells its pool its own. A member grows only into free slot keys, which
// the others free as they release connections above their new shares:
// shrink before grow, and no permit is ever taken back. Demand is the
// highest of the last IdleTime, so a member whose demand falls keeps its
// share for IdleTime, then gives all but its Min back. A released slot key
// is kept for the pool's next dial (no round trip) while the member holds
// no more than its share, and deleted otherwise.
//
// A member's lease (TTL, default 5s) carries its record and its slot keys:
// a member killed without Close frees its share within the TTL, and up to
// half a second more (etcd looks for expired leases twice a second); Close
// revokes the lease and frees it at once; close the member's pools first,
// since the connections they still hold are then counted no more.
//
// # Several pools in one process
//
// One Budget serves any number of the process's pools (a pool per
// database of a server, the read pool beside the write pool): give each
// the same Budget as its Config.Budget. In etcd the process is one member,
// whose demand is the sum of its pools' demands and whose minimum is
// Options.Min; in the process its pools divide the member's share among
// themselves as the pools of a shoal.LocalBudget divide its size, through
// the same code: each pool's MinConns first, the rest max-min fair by
// demand, a pool's part shrinking only after its demand has stayed low for
// IdleTime, what is left kept by the pools that hold it until another of
// the member's pools asks for it (Budget.AskShare). Give Options.Min at
// least the sum of the pools' MinConns: while the member's share is short
// of them, the minimums take turns, the pools that get theirs changing
// every IdleTime, at least a second, each turn a close and a dial. When
// the last pool leaves (is closed) the member leaves the budget and gives
// every slot back; the next pool to join makes it rejoin. A process may instead make a Budget per pool, with the
// same Name and Size: each pool is then a member of its own, with a Min
// of its own, and shows in `shoal budget` as one.
//
// # When etcd is away
//
// At boot: New does not fail when etcd does not answer, before its ctx's
// deadline or at all (a service must start while etcd is down); an etcd
// that answers and refuses (a user without a role on Prefix) is an error,
// as a wrong Size is. Unanswered, New logs a warning, and the member runs
// on its Min with permits granted locally, numbered from the top of
// [0, N), while it keeps trying to join. Those permits are not counted in etcd until it
// joins: up to Min connections per such member beyond N, which the
// minimums check cannot see either. On joining, each permit gets the slot
// key of its own number, and only that one: its connection holds that
// number's fence lock at the server (below), and a key of another number
// would leave its own free in etcd but locked, refusing every other
// member's dial with it. A permit whose number another member holds is
// revoked: the pool closes that connection when it is idle or released
// (shoal.ReasonRevoked), and the member is over budget until it has.
//
// Later (etcd stopped, partitioned, or a cluster without quorum): a member
// keeps every connection and every slot it holds, grows no further (no key
// can be created without etcd), and drops nothing. If its lease expired
// meanwhile it rejoins when etcd answers, moving its keys to a new lease or
// creating them again, as at boot. A rejoin keeps its new lease alive
// from the start, however long its requests take between them, and one
// that fails part way keeps that lease alive, and the keys it moved
// there, for the next attempt, so those keys are not freed for other
// members unless etcd stops renewing it too. A cluster that loses one member
// of three keeps quorum; the client fails over and nothing visible
// changes. Give the client every endpoint, and a short gRPC reconnect backoff
// (grpc.WithConnectParams; gRPC's default grows to two minutes) so a
// member notices etcd's return soon.
//
// # A slot counted twice
//
// Every lease scheme, this one included, can count a slot twice: a process
// paused (SIGSTOP, a long GC, a VM migration, a partition from etcd but not
// from the database) past its lease still holds its connections open
// after etcd has given their slots to others. The window opens TTL after
// the pause began and lasts as long as the paused process keeps those
// connections: until it resumes, rejoins, finds its slots taken and closes
// its surplus as they are released; for a process stopped for good, until
// the server or the kernel drops its connections. A lease held longer than
// TTL by etcd (a change of etcd leader resets lease TTLs) only
// delays a dead member's slots being freed; it never counts one twice.
//
// A lease that ends while its member lives (revoked by an operator or by
// etcd, or expired while the member was cut off from etcd only) opens the
// same window at once: its slot keys go with it, other members may take
// them before the member rejoins, and its connections whose numbers were
// taken are revoked, closing only when idle or released. Until they have,
// the budget's members hold more than N connections between them.
//
// Only a check at the server is exact. For PostgreSQL, shoalpgx fences:
// each connection takes pg_try_advisory_lock(FenceKey(), slot) when
// dialled, a session lock that dies with its backend, with no clock and no
// lease. A dial whose slot is still locked by a paused process's backend
// fails and calls the permit's Fenced method; the budget passes over that
// slot for a second and gives another. (pg_advisory_unlock_all and
// DISCARD ALL release the lock; see shoalpgx.) For HTTP and gRPC there is
// no such fence: size N with the window in mind.
//
// # Prior art
//
// Google's Doorman (youtube/doorman) hands out capacity as leases from a
// master elected through etcd, with fair-share water-filling; its master
// keeps the state in memory, so a new master spends a lease length in a
// learning mode, and a client that cannot renew falls back to a
// configured capacity. Here there is no master: every member runs the same
// deterministic function on the same records, and the count itself (the
// slot keys) lives in etcd, so nothing needs learning after a failover;
// the fallback is Doorman's "safe" mode, with the capacity being what the
// member holds (or Min at boot).
//
// etcd's own client/v3/concurrency has sessions (a lease kept alive, as
// here), mutexes, elections and STM, but no semaphore. Its history is a
// list of lease traps: a Mutex returned without checking its lease was
// still alive, two holders after a partition, lease TTLs reset by leader
// changes, every lease revoked while the leader stalled in fdatasync.
// Here every new permit is a write under the lease (a lost lease fails
// it), a member whose lease is lost assumes none of its keys and re-takes
// them, the double count is documented rather than denied, and after a
// mass revocation every member rejoins and re-takes those of its slot
// numbers still free, dropping nothing but the connections whose numbers
// another member took first (a double count until they close, as above).
//
// Curator's InterProcessSemaphoreV2 (ZooKeeper) keeps ephemeral lease nodes
// behind a lock; nodes orphaned by a reconnect or an interrupt hold slots
// for ever. Here a create whose answer was lost shows up in the watch as
// a key of ours that we do not track; it is adopted and trimmed, and in
// any case it dies with the lease.
//
// Consul's semaphore keeps the limit and all holders in one .lock key
// updated by check-and-set, so every acquire contends on one key; and a
// holder kept running 30 s to 5 minutes after a partition, the double
// count above. Here a permit contends only on the slot key it picks, at
// random among the free ones.
//
// Redisson's RPermitExpirableSemaphore gives each permit its own lease,
// because a plain semaphore never gets permits back from a dead machine.
// Here one lease per member covers all its permits: one keep-alive per
// process, not per connection.
package shoaletcd
