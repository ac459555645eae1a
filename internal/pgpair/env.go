package pgpair

import (
	"fmt"
	"net/url"
	"os"
	"strings"
)

// Environment variables the package reads.
const (
	// EnvPrimary is the connection string of the pair's primary.
	EnvPrimary = "SHOAL_TEST_PG_PRIMARY"
	// EnvStandby is the connection string of its standby.
	EnvStandby = "SHOAL_TEST_PG_STANDBY"
	// EnvHA is the multi-host connection string of both, primary first.
	EnvHA = "SHOAL_TEST_PG_HA"
	// envRequire turns a missing pair from a skip into a failure.
	envRequire = "SHOAL_REQUIRE_SERVICES"
)

// Node is one server of the pair.
type Node struct {
	// ConnString connects to this server alone.
	ConnString string
	// Addr is its host:port, as it appears in the connection strings.
	Addr string
	// Port is its port, which also names its cluster in pair.sh.
	Port string
}

// String returns the server's address; never the password.
func (n Node) String() string { return n.Addr }

// nodeFromEnv reads one server's connection string from env.
func nodeFromEnv(env string) (Node, error) {
	s := os.Getenv(env)
	if s == "" {
		return Node{}, fmt.Errorf("pgpair: %s is not set (scripts/test-env.sh sets it)", env)
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "postgres" && u.Scheme != "postgresql" || u.Port() == "" {
		return Node{}, fmt.Errorf("pgpair: %s is not a postgres:// URL with a host:port", env)
	}
	if strings.Contains(u.Host, ",") {
		return Node{}, fmt.Errorf("pgpair: %s names several hosts (%s); it must name one", env, u.Host)
	}
	return Node{ConnString: s, Addr: u.Host, Port: u.Port()}, nil
}

// ReplaceHost returns the connection string cs with the host from, one of
// its hosts, replaced by to: a Proxy's address in place of the server behind
// it. It fails when cs has no such host.
func ReplaceHost(cs, from, to string) (string, error) {
	u, err := url.Parse(cs)
	if err != nil {
		return "", fmt.Errorf("pgpair: not a URL connection string: %v", redactErr(err))
	}
	hosts := strings.Split(u.Host, ",")
	found := false
	for i, h := range hosts {
		if h == from {
			hosts[i] = to
			found = true
		}
	}
	if !found {
		return "", fmt.Errorf("pgpair: the connection string's hosts %s do not include %s", u.Host, from)
	}
	u.Host = strings.Join(hosts, ",")
	return u.String(), nil
}

// redactErr keeps a connection string, and so its password, out of a URL
// parse error.
func redactErr(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}
