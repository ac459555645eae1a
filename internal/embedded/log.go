package embedded

import (
	"io"
	"log"
)

// discardLogger keeps the servers quiet: a benchmark that closes
// connections abruptly makes net/http log TLS handshake errors that say
// nothing about the measurement.
func discardLogger() *log.Logger { return log.New(io.Discard, "", 0) }
