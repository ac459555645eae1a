// Package fairshare is shoal's one computation of connection shares: the
// max-min fair division of a budget among its members (Divide), and the
// smoothing of a member's demand that keeps shares from following every
// dip between two bursts (Smoother). shoaletcd runs it on the members'
// records in etcd. Among the pools of one process (the core's in-process
// budget, and the pools of one shoaletcd member) DividePools adds what a
// process can afford, one clock reading every pool: the tie order goes
// round (RotatedIDs), and while a pool waits the shares move toward the
// pools' need (Need) as sparingly as the waiting pools allow (Rebalance).
// Every budget that divides connections among claimants should use it, so
// that a share means the same wherever it is computed.
package fairshare
