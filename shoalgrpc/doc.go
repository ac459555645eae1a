// Package shoalgrpc is a stream-aware pool of gRPC connections.
//
// One grpc.ClientConn to one server carries at most as many concurrent
// streams (calls) as the server allows, typically 100; grpc-go makes every
// call past that limit wait for a free stream on the same connection, even
// when the caller would gladly use a second one. A [Pool] holds several
// grpc.ClientConns to the same target and sends each call to the
// least-loaded ready connection that still has a free stream, opening a new
// connection only when every open one is full, up to Options.MaxConns. When
// all of them are full, callers wait in first-come, first-served order for
// the first stream that frees up on any connection.
//
// *Pool satisfies grpc.ClientConnInterface, so generated clients work on it
// unchanged:
//
//	pool, err := shoalgrpc.NewClient("127.0.0.1:2379", shoalgrpc.Options{},
//		grpc.WithTransportCredentials(insecure.NewCredentials()))
//	...
//	defer pool.Close()
//	kv := etcdserverpb.NewKVClient(pool)
//
// # Slots
//
// Each connection has MaxStreams slots. A unary call holds one from before
// it starts until it returns. A stream holds one from NewStream until grpc
// considers it finished: RecvMsg returned an error (io.EOF included), or a
// response arrived on a stream whose server does not stream, or SendMsg or
// Header failed, or the stream's context ended. That is exactly as long as
// grpc-go itself keeps the HTTP/2 stream open, so the pool's count matches
// what the server sees. A stream that an interceptor given as a dial option
// wraps keeps its slot across every stream the interceptor opens for it (a
// retry on the same connection) and until the stream it returned ends that
// way, or its context does. grpc-go documents that an abandoned stream whose
// context never ends leaks until the ClientConn closes; here such a stream
// is given back when the garbage collector finds it unreachable (the pool
// cancels it), but that is a backstop with no timing guarantee: cancel the
// context or read to the end.
//
// # The server's stream limit
//
// grpc-go does not expose the SETTINGS_MAX_CONCURRENT_STREAMS a server
// advertises. Over plaintext connections the pool reads it itself, from the
// first HTTP/2 frame the server sends, through a context dialer it installs,
// and lowers the connection's slot count to match (see
// Options.IgnoreServerStreamLimit for when that is not possible). Over TLS
// the frame is encrypted and Options.MaxStreams is used as given. The limit
// takes effect when the connection's first call starts: callers already
// waiting when a connection opens may be placed on it up to MaxStreams at
// once, and grpc-go holds those past the server's limit until a stream
// frees up (they wait; none fails). Only the server's first SETTINGS frame
// is read; a limit it changes later is not seen.
//
// # Readiness and lifetime
//
// A connection joins the pool only once it is READY. A call is not sent on
// a connection in TRANSIENT_FAILURE while another connection is ready: that
// connection is retired (it takes no new calls and closes when its calls end)
// and the pool dials a fresh one when it needs it. A connection older than
// its MaxLifetime (with jitter) likewise takes no new calls and closes once
// its last call ends, so no call in flight fails because of its age.
//
// # Failures
//
// NewClient lets grpc.NewClient judge the target and dial options once, as
// each connection will, and fails at once, in grpc-go's words, on what it
// refuses: no transport credentials, per-call credentials that need a
// secure transport over an insecure one, a target it cannot parse, a bad
// default service config. The client it makes for that never connects.
//
// A connection that cannot be made fails the calls waiting for it (see
// below for when) with a *PoolError whose message names the target,
// without credentials, and the cause: "connecting to db:443: TLS handshake
// failed, the server's certificate was rejected: tls: failed to verify
// certificate: x509: certificate signed by unknown authority". The causes
// told apart are a refused connection, a host name that did not resolve, a
// TLS handshake whose certificate the client rejected or that the server
// refused, and a timeout; the error underneath stays reachable through
// errors.Is and errors.As (syscall.ECONNREFUSED, *net.DNSError,
// *tls.CertificateVerificationError). grpc-go keeps the cause inside its
// balancer; when the pool's context dialer did not see it (a TLS failure,
// or a dialer of the caller's), the pool makes one more attempt, on a
// client of its own, to read it.
//
// A failure no retry can mend is marked shoal.ErrPermanent: a certificate
// the client rejects, a TLS handshake the server refuses with an alert
// (a client certificate it wants or rejects, a protocol version or cipher
// it will not use, no HTTP/2), TLS spoken to a server that does not speak
// it. The pool then fails calls at once and tries again every second,
// doubling to ten, instead of four times a second. Over TLS 1.3 a server
// refuses a client certificate only after the client's handshake is over,
// and grpc-go may then see the connection broken by the server's close
// (a broken pipe) before the alert that explains it; such a failure is not
// marked.
//
// # What tracers see
//
// A stats handler given as a dial option (grpc.WithStatsHandler, such as
// otelgrpc.NewClientHandler) sees every call that reaches a connection
// from grpc-go, as usual. A call the pool fails before a connection has it
// (no connection could be made, its context ended while it waited for a
// stream, MaxWaiters, Close) is sent through the pool's failure channel: a
// grpc.ClientConn made from the same target and dial options that connects
// nowhere and whose balancer fails each call with the pool's error. So
// grpc-go itself gives the stats handlers what it gives them for a call
// that fails before it is sent on one grpc.ClientConn: TagRPC, then
// HandleRPC with *stats.Begin and *stats.End, whose Error carries the
// PoolError and its gRPC code (Unavailable, DeadlineExceeded,
// ResourceExhausted, Canceled). A tracer records one span per such call,
// with that status, begun when the pool gave up: the wait before it is in
// the pool's own wait span (shoalotel's WithWaitSpans), not in the call's.
// Interceptors given as dial options see the call the same way, and what
// they return is what the caller gets. As on a grpc.ClientConn, a call made
// after Close reaches neither.
//
// # Where it differs from one grpc.ClientConn
//
//   - A pool that has never connected fails the calls waiting for its
//     first connection with that dial's error at once. Later, with no
//     connection open, a failed dial fails only the calls whose deadlines
//     come before the pool's next try; the others wait for it. Once dials
//     have failed for 100ms the pool counts the server as down and fails
//     calls at once with codes.Unavailable (see shoal.Pool), except those
//     made with grpc.WaitForReady(true): they wait, until their context
//     ends, for a dial that succeeds, as on one grpc.ClientConn. A
//     WaitForReady given only as a default call option
//     (grpc.WithDefaultCallOptions) is not seen by the pool.
//   - GetState is the state of the pool, not of one connection: Ready
//     while any connection is, Connecting while one connects or a dial is
//     in flight, TransientFailure after a failed dial, Idle before the
//     first, and Shutdown after Close. Connect dials one connection in the
//     background if none is open. There is no WaitForStateChange: poll
//     GetState. Target leaves out any credentials the target holds.
//   - Interceptors given to NewClient (grpc.WithUnaryInterceptor and the
//     like) run on the connection that carries the call, inside the pool;
//     a call the pool fails reaches them through the failure channel (see
//     What tracers see), where a retry they make meets the same failure.
//     Options' UnaryInterceptors and StreamInterceptors run once around
//     the whole call, the wait for a slot included, and a retry there asks
//     the pool again; their cc argument is nil.
//   - grpc-go puts an unused ClientConn to sleep after its idle timeout (30
//     minutes by default) and reconnects on the next call: a MinConns
//     connection stays in the pool but not connected. Pass
//     grpc.WithIdleTimeout(0) to keep it connected.
//   - The pool's context dialer wraps the connection (to read the server's
//     stream limit), over TLS too, since dial options do not say which
//     transport they use, and grpc-go then does not set TCP_USER_TIMEOUT
//     from grpc.WithKeepaliveParams. Over TLS the limit cannot be read,
//     so set IgnoreServerStreamLimit there when you set keepalive
//     parameters; over plaintext, when that timeout matters more than the
//     limit. The dialer also keeps Go's default TCP keep-alive (15s).
package shoalgrpc
