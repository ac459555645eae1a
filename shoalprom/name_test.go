package shoalprom_test

import (
	"strings"
	"testing"

	"github.com/shoalpool/shoal/shoalprom"
)

// The table of cases is in internal/poolmetrics; this checks the wrapper.
func TestOriginName(t *testing.T) {
	got, err := shoalprom.OriginName("postgres://app:s3cret@DB.internal/orders?password=s3cret")
	if err != nil || got != "postgres://db.internal:5432" {
		t.Fatalf("OriginName = %q, %v", got, err)
	}
	_, err = shoalprom.OriginName("host=db password=s3cret")
	if err == nil || !strings.HasPrefix(err.Error(), "shoalprom: ") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("OriginName of a DSN: %v", err)
	}
}
