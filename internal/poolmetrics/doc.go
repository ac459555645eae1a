// Package poolmetrics holds what shoalprom and shoalotel share: the
// registry of pool names (Registry), each name's attached Stats sources
// and hosts function (Pool), the close reasons' labels, the default
// histogram buckets, and the pool name of a URL. What is theirs alone is
// turning these values into Prometheus metrics or OpenTelemetry
// instruments.
package poolmetrics
