package etcdtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// memberState is the part of etcd's maintenance status (its JSON gateway, which
// spells 64-bit numbers as strings) that Leader reads.
type memberState struct {
	Header struct {
		MemberID string `json:"member_id"`
	} `json:"header"`
	Leader string `json:"leader"`
}

// Leader returns the index in Members of the member that leads the
// cluster, waiting (up to the start timeout, polling every 50ms) until a
// running member that is not stopped both leads and says so. Tests use it
// to kill or stop the leader rather than whichever member comes first.
func (c *Cluster) Leader() int {
	c.t.Helper()
	timeout := 30 * time.Second
	if len(c.Members) > 0 {
		timeout = c.Members[0].startTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		for i, m := range c.Members {
			if !m.Running() || m.Stopped() {
				continue
			}
			s, err := memberStatus(ctx, client, m.Endpoint)
			if err != nil {
				last = err
				continue
			}
			if s.Leader != "" && s.Leader != "0" && s.Leader == s.Header.MemberID {
				return i
			}
		}
		select {
		case <-ctx.Done():
			c.t.Fatalf("etcdtest: no leader within %v (last error: %v)", timeout, last)
			return -1
		case <-tick.C:
		}
	}
}

// memberStatus asks one member for its maintenance status.
func memberStatus(ctx context.Context, client *http.Client, endpoint string) (memberState, error) {
	var s memberState
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		"http://"+endpoint+"/v3/maintenance/status", strings.NewReader("{}"))
	if err != nil {
		return s, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("%s: status: %s", endpoint, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return s, fmt.Errorf("%s: status: %w", endpoint, err)
	}
	return s, nil
}
