// Package embedded runs the servers that `shoal bench` measures against when
// the user gives no target: a TLS request/response line server, a TLS HTTP
// server speaking HTTP/1.1 and HTTP/2 (streams capped per connection), and
// an HTTP/1.1-only variant of it. All listen on 127.0.0.1 on a random port,
// in the same process, and use a self-signed certificate made at start, so
// that setting up a connection costs what it costs against a real server:
// a TCP handshake and a TLS handshake.
//
// Every simulated delay is capped (MaxWork), and every server stops with
// Close, which waits for the goroutines it started.
package embedded
