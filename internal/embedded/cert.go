package embedded

import "github.com/shoalpool/shoal/internal/selfsigned"

// Cert is the embedded servers' self-signed certificate, with the pool a
// client needs to trust it.
type Cert = selfsigned.Cert

// NewCert generates a fresh self-signed certificate for the servers.
func NewCert() (*Cert, error) { return selfsigned.New() }
