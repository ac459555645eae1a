package pgtest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// envTenants names the connection string of a tenant role on the test
// server, with %02d for the tenant's number (scripts/services.sh makes
// shoal_tenant_00 .. shoal_tenant_49, each owning a schema of its name).
const envTenants = "SHOAL_TEST_PG_TENANTS"

// TenantConnString returns tenant n's connection string: it logs in as
// that tenant's own role. It skips (fails, under SHOAL_REQUIRE_SERVICES=1)
// when SHOAL_TEST_PG_TENANTS is unset, and fails when the variable does
// not take a number. Neither message shows the string: it holds a
// password.
func TenantConnString(t testing.TB, n int) string {
	t.Helper()
	template := os.Getenv(envTenants)
	if template == "" {
		if os.Getenv(envRequireServices) == "1" {
			t.Fatalf("%s is not set and %s=1: the tenant roles are required (run scripts/services.sh and . scripts/test-env.sh)", envTenants, envRequireServices)
		}
		t.Skipf("%s is not set", envTenants)
	}
	if strings.Count(strings.ReplaceAll(template, "%%", ""), "%") != 1 {
		t.Fatalf("%s must have one verb, for the tenant's number (%%02d); a %% of its own is written %%%%", envTenants)
	}
	s := fmt.Sprintf(template, n)
	if strings.Contains(s, "%!") {
		t.Fatalf("%s's verb does not take the tenant's number: use %%02d", envTenants)
	}
	return s
}
