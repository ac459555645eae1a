// Package selfsigned makes a throwaway self-signed certificate for
// 127.0.0.1 and localhost, for the embedded test servers and for tests that
// need a real TLS handshake on loopback. Standard library only.
package selfsigned

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"time"
)

// certValidity is how long the self-signed certificate is valid: long
// enough for any run, short enough that it is useless afterwards.
const certValidity = 24 * time.Hour

// Cert is a self-signed certificate for 127.0.0.1 and localhost, with the
// pool a client needs to trust it.
type Cert struct {
	TLS  tls.Certificate // for the servers
	Pool *x509.CertPool  // for the clients
}

// New generates a fresh ECDSA P-256 self-signed certificate.
func New() (*Cert, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("selfsigned: generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, fmt.Errorf("selfsigned: serial number: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"shoal (self-signed, for loopback)"}},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("selfsigned: create certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("selfsigned: parse certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return &Cert{
		TLS:  tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		Pool: pool,
	}, nil
}

// ClientTLS returns a client configuration that trusts the certificate.
// Session resumption is off on purpose: a new connection pays a full
// handshake, as the first connection to a real server does.
func (c *Cert) ClientTLS() *tls.Config {
	return &tls.Config{
		RootCAs:                c.Pool,
		ServerName:             "127.0.0.1",
		MinVersion:             tls.VersionTLS12,
		SessionTicketsDisabled: true,
	}
}

// ServerTLS returns the configuration of a server presenting the
// certificate.
func (c *Cert) ServerTLS() *tls.Config {
	return &tls.Config{
		Certificates:           []tls.Certificate{c.TLS},
		MinVersion:             tls.VersionTLS12,
		SessionTicketsDisabled: true,
	}
}
