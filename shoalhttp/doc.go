// Package shoalhttp is an http.RoundTripper built on shoal's connection
// pool: a drop-in replacement for http.Transport for clients that talk to a
// few origins a lot (ClickHouse, InfluxDB, any HTTP API).
//
// Each origin (scheme://host:port) gets its own shoal.Pool. HTTP/1.1
// connections are exclusive: a connection serves one request at a time and
// goes back to the pool when the response body has been read to the end or
// closed. HTTP/2 connections (negotiated by ALPN over TLS, or by prior
// knowledge for h2c when Options.H2CPriorKnowledge is set) are multiplexed:
// each carries up to the server's SETTINGS_MAX_CONCURRENT_STREAMS requests,
// a request goes to the least-loaded connection, and a new connection is
// dialled only when all are full. An HTTP/2 origin keeps two connections
// by default (Options.MinConns), because one is a serial point at both
// ends: a single goroutine reads all of a connection's frames on each
// side. A GOAWAY from the server retires its connection gracefully:
// in-flight requests finish, new ones go elsewhere. While a connection
// carries more than four requests, their frames are written to the socket
// in batches by a writer goroutine instead of one write system call (and
// one TLS record) per request, as golang.org/x/net/http2 does.
//
// An https origin's protocol is learned from its first connection's ALPN:
// requests that arrive meanwhile wait for that one connection instead of
// each dialling, and it becomes the first connection of the origin's pool.
// An HTTP/2 pool's stream limit per connection is the limit the server
// announced on that first connection (a connection whose server announces
// less is lowered to it). CloseIdleConnections forgets what was learned.
//
// Compared with http.DefaultTransport, the zero Options keep up to 64
// connections per origin (not 2 idle ones), give connections a maximum age
// with jitter (so a client does not stay pinned to one backend behind a load
// balancer), wait for a connection in first-come, first-served order (an
// HTTP/1.1 connection may go to a request arriving later while the oldest
// waiter has waited less than HandoffAfter, 4ms by default), and can warm
// origins before the first request. Stats reports each origin's
// pool.
//
// # Retries
//
// A request is retried once, on another connection, only when a pooled
// (previously used) connection turns out to be dead before the server
// answered anything and the request can be replayed: its body is nil,
// http.NoBody or has GetBody, and either nothing of it reached the socket or
// its method is idempotent (GET, HEAD, OPTIONS, TRACE, or an Idempotency-Key
// header is set), the same rule net/http follows. Idle HTTP/1.1 connections
// are checked for a close by the server before they are handed out, so that
// the retry is rarely needed. Nothing else is retried.
//
// # What it does not do
//
// Proxies (HTTP_PROXY and the like), protocol upgrades (101 Switching
// Protocols) and "Expect: 100-continue" waiting are not supported; use
// net/http's Transport for those. Request URLs must be http or https.
//
// Errors name the origin and the method, never the path, the query string
// (which may carry a password, as ClickHouse's does), the URL's userinfo or a
// header.
package shoalhttp
