package shoalgrpc

import (
	"fmt"
	"strings"

	"google.golang.org/grpc"
)

// checkDialOptions lets grpc.NewClient judge target and dialOpts once, as
// it will for every connection, so that options it refuses (no transport
// security, credentials that need it over an insecure transport, a target
// it cannot parse, a bad default service config, ...) fail NewClient at
// once instead of every call later. grpc.NewClient only parses and checks:
// the client starts IDLE and is closed here before it connects, and its
// Close ends the goroutine it started. It returns the target as grpc-go
// resolves it, with the scheme of the name resolver it chose
// ("dns:///host:port" for a bare host:port).
func checkDialOptions(target string, dialOpts []grpc.DialOption) (canonicalTarget string, err error) {
	cc, err := grpc.NewClient(target, dialOpts...)
	if err != nil {
		return "", err
	}
	canonicalTarget = cc.CanonicalTarget()
	if err := cc.Close(); err != nil {
		return "", fmt.Errorf("closing the client made to check the options: %w", err)
	}
	return canonicalTarget, nil
}

// targetScheme returns the scheme of a canonical target.
func targetScheme(canonicalTarget string) string {
	scheme, _, _ := strings.Cut(canonicalTarget, ":")
	return scheme
}
