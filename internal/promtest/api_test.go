package promtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

var client = &http.Client{Timeout: 10 * time.Second}

func httpGet(u string) (string, error) {
	resp, err := client.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", u, resp.Status, body)
	}
	return string(body), nil
}

// apiGet calls Prometheus's HTTP API and decodes its data into v.
func apiGet(base, path string, query url.Values, v any) error {
	u := base + path
	if query != nil {
		u += "?" + query.Encode()
	}
	body, err := httpGet(u)
	if err != nil {
		return err
	}
	var r struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if r.Status != "success" {
		return fmt.Errorf("%s: %s", path, r.Error)
	}
	return json.Unmarshal(r.Data, v)
}

// series is one element of an instant query's vector.
type series struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`
}

// instant runs an instant query and returns its vector.
func instant(base, expr string) ([]series, error) {
	var d struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := apiGet(base, "/api/v1/query", url.Values{"query": {expr}}, &d); err != nil {
		return nil, err
	}
	if d.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: a %s, not a vector", expr, d.ResultType)
	}
	var out []series
	return out, json.Unmarshal(d.Result, &out)
}

// alert is one of /api/v1/alerts's.
type alert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

func alerts(base string) ([]alert, error) {
	var d struct {
		Alerts []alert `json:"alerts"`
	}
	return d.Alerts, apiGet(base, "/api/v1/alerts", nil, &d)
}

// target is one of /api/v1/targets's active targets.
type target struct {
	Labels    map[string]string `json:"labels"`
	Health    string            `json:"health"`
	LastError string            `json:"lastError"`
}

func targets(base string) ([]target, error) {
	var d struct {
		Active []target `json:"activeTargets"`
	}
	return d.Active, apiGet(base, "/api/v1/targets", nil, &d)
}
