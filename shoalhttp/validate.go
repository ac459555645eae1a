package shoalhttp

import (
	"fmt"
	"net/http"

	"golang.org/x/net/http/httpguts"
)

// checkRequest refuses a request that cannot be written as it stands,
// before any connection is taken: http.Request.Write (HTTP/1.1) sends the
// method and header names as they are, so a method holding CRLF would
// inject lines into the request and a header name holding a space would
// be dropped without a word. The message names what is wrong but never
// quotes a header's value, which may be a credential.
func checkRequest(req *http.Request) error {
	if req.Method != "" && !httpguts.ValidHeaderFieldName(req.Method) { // a method is a token, as a field name is
		return fmt.Errorf("shoalhttp: invalid method %q", req.Method)
	}
	for k, vs := range req.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Errorf("shoalhttp: invalid header field name %q", k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Errorf("shoalhttp: invalid value for header field %q", k)
			}
		}
	}
	for k := range req.Trailer {
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Errorf("shoalhttp: invalid trailer field name %q", k)
		}
	}
	return nil
}
