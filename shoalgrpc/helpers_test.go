package shoalgrpc

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// insecureCreds is the plaintext transport every loopback test uses.
func insecureCreds() grpc.DialOption {
	return grpc.WithTransportCredentials(insecure.NewCredentials())
}
