package main

import (
	"strings"
)

// targetHTTPRequest is the request an HTTP-speaking target gets: the URL
// itself for http(s)://, "SELECT 1" for ClickHouse, /ping for InfluxDB.
// Credentials in the URL go as basic auth.
func targetHTTPRequest(t *target) *httpRequest {
	u := *t.URL
	user := u.User
	u.User = nil
	switch t.Kind {
	case targetClickHouse:
		u.Scheme = strings.TrimPrefix(t.Scheme, "clickhouse+")
		if u.Path == "" {
			u.Path = "/"
		}
		q := u.Query()
		if q.Get("query") == "" {
			q.Set("query", "SELECT 1")
		}
		u.RawQuery = q.Encode()
	case targetInfluxDB:
		u.Scheme = strings.TrimPrefix(t.Scheme, "influxdb+")
		if u.Path == "" || u.Path == "/" {
			u.Path = "/ping"
		}
	}
	req := &httpRequest{url: u.String()}
	if user != nil {
		req.user = user.Username()
		req.password, _ = user.Password()
		req.hasAuth = true
	}
	return req
}

// speaksHTTP reports whether a target kind is reached over HTTP.
func speaksHTTP(k targetKind) bool {
	return k == targetHTTP || k == targetClickHouse || k == targetInfluxDB
}
