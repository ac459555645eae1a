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
//	cfg.Observer = shoal.MultiObserver(promObserver, shoaldebug.NewObserver("orders"))
//
// shoal.MultiObserver passes the attachment on; an Observer wrapper of
// your own must forward Attach (shoal.StatsAttacher) for the pool to be
// listed. A pool whose Observer cannot be set is listed with
// Register(name, pool.Stats), without those three.
//
// For each pool the page shows open, idle, in-use and waiting connections,
// the acquire-wait histogram, dials and dial errors, barge misses, leaks
// with the stacks that acquired them and, for a pool in a shared Budget,
// its share, demand and the number of members. It refreshes itself every
// second. The same address answers with JSON for scripts when asked with
// "Accept: application/json" or "?format=json".
//
// Pool names are shown as given: do not put a connection string in one.
// A name that holds a URL with a password, or a keyword/value password,
// has the password masked all the same, but the error text of a failed
// dial is shown as the dialler wrote it. Like pprof, the page tells a
// reader about the program's internals: mount it on an address that only
// operators reach.
package shoaldebug
