package shoal

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
)

// A key whose pool New refuses (the minimums would not fit in the budget)
// fails with an error that names the group, as one whose Config fails
// does, and keeps the ConfigError for errors.As.
func TestGroupRefusedPoolNamesTheGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := newTenants(1)
		g := newTestGroup(t, GroupConfig[string, *fakeConn]{Name: "tenants", Budget: mustBudget(t, 1), Config: ts.config})
		ctx := context.Background()
		if err := g.Do(ctx, "a", func(*fakeConn) error { return nil }); err != nil {
			t.Fatal(err)
		}
		err := g.Do(ctx, "b", func(*fakeConn) error { return nil })
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), `group "tenants"`) {
			t.Fatalf("a key whose pool the budget refuses: %v, want a ConfigError in an error naming the group", err)
		}
	})
}
