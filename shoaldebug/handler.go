package shoaldebug

import (
	"encoding/json"
	"mime"
	"net/http"
	"strings"
)

// Handler returns the handler of the default registry's page.
func Handler() http.Handler { return Default.Handler() }

// Handler returns the handler of r's page: HTML for a browser, JSON when
// the request asks for it (see the package doc), and with "?fragment=1"
// the part of the HTML that lists the pools, which the page's script
// fetches every second so that one template draws both.
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "shoaldebug: only GET and HEAD", http.StatusMethodNotAllowed)
			return
		}
		// What the page shows is live: a cached copy would lie.
		w.Header().Set("Cache-Control", "no-store")
		page := r.Snapshot()
		q := req.URL.Query()
		switch {
		case q.Get("format") == "json" || wantsJSON(req.Header.Get("Accept")):
			w.Header().Set("Content-Type", "application/json")
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			_ = enc.Encode(page)
		case q.Get("fragment") == "1":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_ = pageTemplate.ExecuteTemplate(w, "pools", page)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_ = pageTemplate.Execute(w, page)
		}
	})
}

// wantsJSON reports whether an Accept header names application/json. A
// browser's Accept lists text/html first and never JSON, so naming it at
// all is a script's request.
func wantsJSON(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		if t, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && t == "application/json" {
			return true
		}
	}
	return false
}
