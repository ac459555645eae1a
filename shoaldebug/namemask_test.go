package shoaldebug_test

import (
	"testing"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoaldebug"
)

// TestNameMaskedAfterWords guards a keyword/value connection string that
// follows words of a pool's name: its password is masked even when quoted
// with a space or written "password = pw", and nothing else changes.
func TestNameMaskedAfterWords(t *testing.T) {
	cases := []nameShown{
		{"orders host=db password='hunter 2'", "orders host=db password=xxxxx"},
		{"orders host=db password = hunter2", "orders host=db password = xxxxx"},
		{"orders: host=db password='hunter 2' dbname=orders", "orders: host=db password=xxxxx dbname=orders"},
		{"orders host=db url=postgres://app:hunter2@db", "orders host=db url=postgres://app:xxxxx@db"},
		// Not a connection string: left as written.
		{"orders v=1 x", "orders v=1 x"},
		{"orders host=db (primary)", "orders host=db (primary)"},
		{"cache 50% full", "cache 50% full"},
	}
	checkNamesShown(t, cases)
}

// TestNameMaskedAfterSeparators guards a password keyword that follows a
// separator other than a space ("orders,password=pw"): read as
// keyword/value text its key is "orders,password", no password keyword,
// yet the value is a password and is masked; nothing else changes.
func TestNameMaskedAfterSeparators(t *testing.T) {
	cases := []nameShown{
		{"orders,password=pw", "orders,password=xxxxx"},
		{"orders;password=pw", "orders;password=xxxxx"},
		{"orders;Password = pw", "orders;Password = xxxxx"},
		{"orders,host=db,password=pw", "orders,host=db,password=xxxxx"},
		{"orders v=1,sslpassword=pw dbname=orders", "orders v=1,sslpassword=xxxxx dbname=orders"},
		{"orders;password='hunter 2' (primary)", "orders;password=xxxxx (primary)"},
		{"orders|token=abc def", "orders|token=xxxxx def"},
		// No password keyword after the separator: left as written.
		{"orders,replicas=2", "orders,replicas=2"},
		{"orders;mypassword=3 x", "orders;mypassword=3 x"},
		{"orders,passwords", "orders,passwords"},
		{"orders postgres://db/x?a=1&password=pw&b=2", "orders postgres://db/x?a=1&password=xxxxx&b=2"},
	}
	checkNamesShown(t, cases)
}

// TestNameMaskedURLValue guards a name that reads whole as keyword/value
// pairs with a URL among its values (or, after a separator, its keys): the
// URL's password is masked as in any other name.
func TestNameMaskedURLValue(t *testing.T) {
	cases := []nameShown{
		{"host=db url=postgres://app:hunter2@db", "host=db url=postgres://app:xxxxx@db"},
		{"a=1 b=postgres://u:pw@db", "a=1 b=postgres://u:xxxxx@db"},
		{"orders,password=pw postgres://app:hunter2@db/x?sslmode=disable&password=pw&application_name=a",
			"orders,password=xxxxx postgres://app:xxxxx@db/x?sslmode=disable&password=xxxxx&application_name=a"},
		// Not a URL with a password: left as written.
		{"host=db app='a b' x=1", "host=db app='a b' x=1"},
		{"host=db url=http://db/x", "host=db url=http://db/x"},
	}
	checkNamesShown(t, cases)
}

// TestNameMaskedBeforeWords guards a password keyword after a space whose
// value is quoted with a space in it, or written "password = pw", and is
// followed by more words of the name: read whole, such a name is no
// connection string, and read word by word its value is split, yet it is
// a password and is masked; nothing else changes.
func TestNameMaskedBeforeWords(t *testing.T) {
	cases := []nameShown{
		{"orders password='hunter 2' replica", "orders password=xxxxx replica"},
		{"orders password = hunter2 replica", "orders password = xxxxx replica"},
		{"host=db password='hunter 2' (eu)", "host=db password=xxxxx (eu)"},
		{"password='hunter 2' orders", "password=xxxxx orders"},
		// No password keyword: left as written.
		{"orders passwords = 2 x", "orders passwords = 2 x"},
		{"orders app='a b' x", "orders app='a b' x"},
	}
	checkNamesShown(t, cases)
}

// nameShown is a pool's name and the name the page must show for it.
type nameShown struct{ name, want string }

// checkNamesShown registers a pool under each case's name and checks the
// name the page shows for it.
func checkNamesShown(t *testing.T, cases []nameShown) {
	t.Helper()
	reg := shoaldebug.NewRegistry()
	for _, c := range cases {
		reg.Register(c.name, func() shoal.Stats { return shoal.Stats{} })
	}
	pools := reg.Snapshot().Pools
	if len(pools) != len(cases) {
		t.Fatalf("%d pools shown, want %d", len(pools), len(cases))
	}
	for i, p := range pools {
		if p.Name != cases[i].want {
			t.Errorf("name %q shown as %q, want %q", cases[i].name, p.Name, cases[i].want)
		}
	}
}
