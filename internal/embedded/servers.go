package embedded

import "errors"

// Servers is the set of embedded servers `shoal bench` uses.
type Servers struct {
	Cert  *Cert       // the certificate every server presents, for the clients to trust
	Line  *LineServer // TLS line protocol
	HTTP  *HTTPServer // TLS, HTTP/2 and HTTP/1.1
	HTTP1 *HTTPServer // TLS, HTTP/1.1 only
	extra []func() error
}

// Start starts every embedded server. On error, those already started are
// closed.
func Start() (_ *Servers, err error) {
	s := &Servers{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.Cert, err = NewCert(); err != nil {
		return nil, err
	}
	if s.Line, err = StartLineServer(s.Cert); err != nil {
		return nil, err
	}
	if s.HTTP, err = StartHTTPServer(s.Cert, true); err != nil {
		return nil, err
	}
	if s.HTTP1, err = StartHTTPServer(s.Cert, false); err != nil {
		return nil, err
	}
	return s, nil
}

// OnClose registers a function Close calls, for a server started beside
// these (the gRPC one, say).
func (s *Servers) OnClose(f func() error) { s.extra = append(s.extra, f) }

// Close stops every server that was started.
func (s *Servers) Close() error {
	var errs []error
	for i := len(s.extra) - 1; i >= 0; i-- {
		errs = append(errs, s.extra[i]())
	}
	if s.HTTP1 != nil {
		errs = append(errs, s.HTTP1.Close())
	}
	if s.HTTP != nil {
		errs = append(errs, s.HTTP.Close())
	}
	if s.Line != nil {
		errs = append(errs, s.Line.Close())
	}
	return errors.Join(errs...)
}
