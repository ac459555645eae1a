package shoalpgx

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/shoalpool/shoal"
)

// A tenant whose pool NewWithConfig refuses (the minimums would not fit
// in the budget) fails with an error that names the group, as one whose
// Config fails does, and keeps the ConfigError for errors.As.
func TestGroupRefusedPoolNamesTheGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePG(t)
		budget, err := shoal.NewBudget(1)
		if err != nil {
			t.Fatal(err)
		}
		g, err := NewGroup(GroupConfig{
			Name:   "tenants",
			Budget: budget,
			Config: func(string) (*Config, error) {
				return f.config(t, func(c *Config) { c.MinConns = 1 }), nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := g.Close(context.Background()); err != nil {
				t.Errorf("Close: %v", err)
			}
		}()
		ctx := context.Background()
		if _, err := g.Exec(ctx, "acme", "select 1"); err != nil {
			t.Fatal(err)
		}
		_, err = g.Exec(ctx, "globex", "select 1")
		var ce *shoal.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), `group "tenants"`) {
			t.Fatalf("a tenant whose pool the budget refuses: %v, want a shoal.ConfigError in an error naming the group", err)
		}
	})
}
