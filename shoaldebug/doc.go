// Package shoaldebug serves a live page of a program's shoal pools, mounted
// the way net/http/pprof is:
//
//	http.Handle("/debug/shoal", shoaldebug.Handler())
//
// A pool appears on it once it is registered. The usual way is its
// Observer, which also records what Stats does not keep (the acquire-wait
// histogram, the last dial error, recent leak reports with their stacks)
// and registers the pool when shoal.New attaches it:
//
//	cfg.Observer = shoal.MultiObserver(promObserver, shoaldebug.NewObserver(""))
//
// An empty name lists the pool under its own (shoal.Config.Name, or the
// one the pool made up); a name given here is shown instead.
//
// shoal.MultiObserver passes the attachment on; an Observer wrapper of
// your own must forward Attach (shoal.StatsAttacher) for the pool to be
// listed, and AttachHolders (shoal.HoldersAttacher) for its holders to
// be. A pool whose Observer cannot be set is listed with
// Register(name, pool.Stats), without those three nor its holders.
//
// For each pool the page shows open, idle, in-use and waiting connections,
// the acquire-wait histogram, dials and dial errors, barge misses, the
// leases held now (the 32 held longest, oldest first, with their age and,
// with shoal.Config.LeakThreshold or tracing, the function that took
// each), leaks with the stacks that acquired them and, for a pool in a
// shared Budget, its share, demand and the number of members. A budget registered with
// RegisterBudget (a shoal.LocalBudget's Stats: the pools of a shoal.Group,
// the origins of a shoalhttp Transport) is shown with a line per pool:
// its minimum, demand, share and the permits it holds. It refreshes itself every
// second. The same address answers with JSON for scripts when asked with
// "Accept: application/json" or "?format=json": a Page, its keys in
// snake_case and every duration in nanoseconds with the unit in its key
// ("wait_time_ns", "held_ns").
//
// Pool names are shown as given: do not put a connection string in one.
// A name that holds a URL with a password, or a keyword/value password
// (after a space, or a separator as in "orders,password=pw"), has the
// password masked all the same, but the error text of a failed
// dial is shown as the dialler wrote it. Like pprof, the page tells a
// reader about the program's internals: mount it on an address that only
// operators reach.
package shoaldebug
