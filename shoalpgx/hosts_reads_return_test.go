package shoalpgx

import (
	"context"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgpair"
)

// With the default RoleCheckPeriod (1s), reads come back to a standby
// within that period of its qualifying again (docs/operating.md): here from
// the moment the restarted standby accepts connections, with a second more
// for the dial to it and the machine's load.
func TestReadsReturnWithinARoleCheckPeriod(t *testing.T) {
	pair := pgpair.ForTest(t)
	_, reads := readsPool(t, pair, defaultRoleCheckPeriod)
	ctx := context.Background()
	if err := pair.Stop(ctx, pair.Standby, pgpair.Fast); err != nil {
		t.Fatal(err)
	}
	if got := serverPort(t, reads); got != pair.Primary.Port {
		t.Fatalf("with the standby stopped a read ran on port %s, want the primary's %s", got, pair.Primary.Port)
	}
	if err := pair.Start(ctx, pair.Standby); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	eventually(t, 10*time.Second, "reads back on the restarted standby", func() bool {
		port, err := tryPort(reads)
		return err == nil && port == pair.Standby.Port
	})
	if took := time.Since(back); took > time.Second+time.Second {
		t.Errorf("reads came back to the standby %s after it accepted connections, want within RoleCheckPeriod (1s) and a dial", took.Round(time.Millisecond))
	} else {
		t.Logf("reads back on the standby %s after it accepted connections", took.Round(time.Millisecond))
	}
}
