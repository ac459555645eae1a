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
// That wait counts as their wait for a connection, for the Observer and
// its wait span, as a wait for any other dial does.
// When that connection cannot be made, the origin behaves as a pool whose
// server is down: requests fail at once with the dial's error for a
// backoff (10ms doubling to 200ms; 1s doubling to 10s for a refusal no
// retry mends) instead of each dialling, and the failures are logged as a
// pool logs its dials.
// An HTTP/2 pool's stream limit per connection is the limit the server
// announced on that first connection (a connection whose server announces
// less is lowered to it, as it is when its server lowers its limit later;
// one below the requests the connection carries leaves it serving as the
// limit allows, unless a request handed it has no stream there yet, which
// would wait for one: then it is retired with a GOAWAY; a limit of 0
// retires it).
// CloseIdleConnections forgets what was learned.
// An origin's pool (and its maintenance goroutine) lives until
// CloseIdleConnections or Close, even with no connection left open: a
// client that reaches an unbounded set of origins should call
// CloseIdleConnections now and then, as it would to bound http.Transport's
// idle connections.
//
// Compared with http.DefaultTransport, the zero Options keep up to 64
// connections per origin (not 2 idle ones), give connections a maximum age
// with jitter (so a client does not stay pinned to one backend behind a load
// balancer), wait for a connection in first-come, first-served order (an
// HTTP/1.1 connection may go to a request arriving later while the oldest
// waiter has waited less than BargeWindow, 4ms by default), and can warm
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
// header is set), the same rule net/http follows. Over HTTP/2, a request
// the server provably did not process is retried once too, even without
// GetBody when none of its body had been read: one above a GOAWAY's last
// stream, or given a connection that went unusable just before it, on
// another connection, as that one takes no new request; one the server
// refused (REFUSED_STREAM) on the least-loaded connection, which can be
// the one that refused it, since a refused stream leaves its connection
// usable. (x/net's own Transport resends a body without GetBody too, but
// closed by the failed attempt, which a pipe does not survive; net/http
// gives the request up, "cannot rewind body", unless it has another
// connection at hand.) Idle
// HTTP/1.1 connections are checked for a close by the server before they
// are handed out, so that the retry is rarely needed; over TLS, where the server's goodbye is a
// close_notify record, bytes waiting on an idle connection are read (a
// session ticket is fine, anything else closes the connection). A failure
// of the request's own body is returned as such (errors.Is reaches the
// body's error) and never retried. Nothing else is retried.
//
// A server that answers before it has read the whole request body (a 413
// for an upload too large, a 401) and closes the connection gets its answer
// to the caller, not the failed write.
//
// Requests whose method or header names or values cannot be written as they
// are (a method holding CRLF would inject header lines) fail before any
// connection is used, with an error naming the method or the header's name,
// never the value.
//
// # Proxies
//
// Options.Proxy has http.Transport.Proxy's meaning, and by default the
// environment's HTTP_PROXY, HTTPS_PROXY and NO_PROXY are used as
// http.DefaultTransport uses them (read when NewTransport runs; loopback
// hosts always go direct). Options{Proxy: NoProxy} ignores them. A
// plain-http origin's requests go to the proxy in absolute form; an https
// origin is reached through a CONNECT tunnel, with TLS and HTTP/2 (by ALPN)
// end to end through it. http and https proxy URLs are supported; the URL's
// userinfo is sent as Proxy-Authorization and never logged or put in an
// error. Each origin, proxy and set of credentials has a pool of its own,
// named in Stats as "http://host:80 via http://proxy:3128"; two pools that
// differ only in credentials share that name, and Stats shows one of them.
// A proxy that refuses a tunnel gives a *ProxyConnectError with its status.
//
// # Tracing
//
// A request's httptrace.ClientTrace hears what net/http's Transport tells
// it, in the same order, over HTTP/1.1 and HTTP/2: GetConn (with the
// proxy's host:port when there is one), the dial's DNSStart/DNSDone (when
// a name is resolved), ConnectStart/ConnectDone and
// TLSHandshakeStart/TLSHandshakeDone, GotConn (Reused, WasIdle, IdleTime;
// for HTTP/2 with x/net's meaning: idle when no stream is open on the
// wire), WroteHeaders, WroteRequest, GotFirstResponseByte, Got1xxResponse
// and, for HTTP/1.1, PutIdleConn when the connection goes back to the
// pool. The pool dials in the background: a dial fires its hooks on the
// oldest traced request waiting for a connection at the time, as net/http
// fires them on the request whose wait started the dial, even if that
// request is then served by another connection. An HTTP/1.1 connection
// handed from one request straight to a waiting one reports WasIdle, with
// a short IdleTime, where net/http reports it not idle. Wait100Continue and
// Got100Continue fire over HTTP/1.1 (see Full duplex); over HTTP/2 the
// body is not held back, and they do not.
//
// # Timeouts
//
// A request that fails because a deadline passed (its context's, a dial's,
// a TLS handshake's) returns an error whose Timeout method says so, so
// os.IsTimeout holds for it and for the *url.Error http.Client wraps it
// in, and for a response body's read that the deadline cut short; when the
// deadline is http.Client's Timeout, the Client's error says
// "(Client.Timeout exceeded while awaiting headers)" (or "... while
// reading body"), over HTTP/1.1 and HTTP/2, as with net/http's Transport.
// (The Client marks its timeout on a timer of its own that fires at the
// same instant; a request or read failing on that deadline waits up to
// 20ms for it.)
//
// # Protocol upgrades
//
// A 101 Switching Protocols answer (a WebSocket handshake, through
// http.Client or not) gives a response whose Body is an io.ReadWriteCloser
// on the connection, as with net/http: the connection leaves the pool (its
// place in MaxConns is free again, and OnDisconnect is not called for it),
// the request's context no longer applies to it, and closing the Body
// closes it. A WebSocket handshake (Connection: Upgrade, Upgrade:
// websocket) to an origin that may speak HTTP/2 goes over HTTP/1.1, on a
// pool of its own for that origin, named "... (HTTP/1.1 upgrades)" in
// Stats.
//
// # Full duplex
//
// HTTP/1.1 is full duplex, as with net/http: a request whose body streams
// (any body but a small one in memory) is written on a goroutine of its
// own while the response is read, so a server that answers while still
// reading the body gets its answer through, and RoundTrip returns the
// response as soon as its head arrives, while the body is still being
// written. The connection goes back to the pool once both the body and
// the response are done; a response that ends the connection stops the
// rest of the body, and so does a server that has answered and, 50ms
// after the response ended, is still not reading it (the connection is
// then closed, as net/http does). A body of up to 64 KiB in memory (bytes.Reader,
// bytes.Buffer, strings.Reader) is written first, on the caller's
// goroutine, which costs no goroutine and cannot wait on the server: it
// fits in the sockets' buffers. HTTP/2 is full duplex too.
//
// An HTTP/1.1 request with "Expect: 100-continue" and a body holds the
// body back until the server's 100 Continue, its final answer, or
// Options.ExpectContinueTimeout (1 second by default), as net/http does; a
// final answer on a connection that closes means the body is not sent.
//
// # Coming from http.Transport
//
// http.Transport's fields and what stands for them here:
//
//   - Proxy: Options.Proxy (default the environment, as
//     http.DefaultTransport; a nil Proxy there is NoProxy here).
//     ProxyConnectHeader, GetProxyConnectHeader, OnProxyConnectResponse:
//     none; credentials come from the proxy URL.
//   - DialContext: Options.DialContext (Dial: use DialContext).
//     DialTLSContext, DialTLS: none; TLS is always the Transport's own.
//   - TLSClientConfig, TLSHandshakeTimeout, DisableCompression,
//     ExpectContinueTimeout, MaxResponseHeaderBytes: the fields of the
//     same name (a zero TLSHandshakeTimeout is 10 seconds, a zero
//     ExpectContinueTimeout 1 second, as in http.DefaultTransport; a zero
//     MaxResponseHeaderBytes 10 MiB, as in net/http). As in every Options
//     of shoal, zero is the default and a negative value is off: an
//     http.Transport's zero TLSHandshakeTimeout (no bound) is -1 here.
//   - MaxConnsPerHost: Options.MaxConns, per origin (0 means 64, not
//     unlimited).
//   - MaxIdleConnsPerHost, MaxIdleConns: none; idle connections are
//     bounded by MaxConns and closed after MaxIdleTime, and MinIdle keeps
//     some open.
//   - IdleConnTimeout: Options.MaxIdleTime (90 seconds by default, as
//     there). Options.MaxLifetime has no counterpart there.
//   - DisableKeepAlives: none; set Request.Close, or a short MaxLifetime.
//   - ResponseHeaderTimeout: none; use the request's context.
//   - ForceAttemptHTTP2: always on: HTTP/2 is offered by ALPN with a custom
//     DialContext or TLSClientConfig too, unless Options.DisableHTTP2.
//   - TLSNextProto set to an empty map, Protocols without HTTP2:
//     Options.DisableHTTP2. Protocols with UnencryptedHTTP2:
//     Options.H2CPriorKnowledge.
//   - HTTP2 (HTTP2Config): Options.MaxStreamsPerConn caps the server's
//     MaxConcurrentStreams; pings are sent after 30 seconds of silence.
//     The rest: none.
//   - WriteBufferSize, ReadBufferSize: none (buffers are 4 KiB, as
//     net/http's defaults).
//
// # What it does not do
//
// SOCKS proxies are not supported by Options.Proxy (Options.DialContext
// can dial through a SOCKS dialer). Over HTTP/2 "Expect: 100-continue" is
// not waited for: the body is sent at once. Request URLs must be http or
// https.
//
// RoundTrip's errors name the origin and the method, never the path, the
// query string (which may carry a password, as ClickHouse's does), the URL's
// userinfo or a header. An error reading a response's body comes from the
// body, as net/http's does, and names none of them.
package shoalhttp
