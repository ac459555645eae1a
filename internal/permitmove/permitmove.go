// Package permitmove lets shoalhttp move a shoal.LocalBudget permit from
// one member to another without the core exporting a method for it:
// shoalhttp's first connection to an origin takes its permit before the
// origin's pool exists, and the permit must count against that pool once
// the pool adopts the connection. The shoal package sets Move.
package permitmove

// Move moves permit, one a LocalBudget gave out, to member to, joined to
// the same budget, so that it counts as to's from now on and its Release
// gives it back as to's. It fails, changing nothing, for a permit
// released or of another budget, or a member not joined.
var Move func(permit, to any) error
