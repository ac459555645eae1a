package shoal_test

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal"
)

// operatingLine returns the one line of docs/operating.md that holds
// marker, without its indentation and code marks.
func operatingLine(t *testing.T, marker string) string {
	t.Helper()
	doc, err := os.ReadFile("docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for line := range strings.Lines(string(doc)) {
		if strings.Contains(line, marker) {
			found = append(found, strings.Trim(strings.TrimSpace(line), "`"))
		}
	}
	if len(found) != 1 {
		t.Fatalf("docs/operating.md has %d lines with %q, want 1", len(found), marker)
	}
	return found[0]
}

// The errors docs/operating.md shows under "Reading the errors" are what
// the pool writes in the cases they stand for (the acquirers' functions
// named main.* there): a dial that failed, a Close whose context ended, a
// ConfigError and MaxWaiters' refusal. The two timeouts on a full pool are
// TestAcquireErrorInDocs's and TestExhaustionMessageInDocs's.
func TestOperatingDocShowsTheErrorsAsWritten(t *testing.T) {
	t.Run("dial failed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p, err := shoal.New(shoal.Config[int]{Name: "orders", MaxConns: 4,
				Dial: func(context.Context) (int, error) {
					return 0, errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background())
			_, err = p.Acquire(context.Background())
			if want := operatingLine(t, "acquire: dial failed: dial tcp"); err == nil || err.Error() != want {
				t.Errorf("the pool writes\n\t%v\noperating.md shows\n\t%s", err, want)
			}
		})
	})
	t.Run("close", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p, err := shoal.New(shoal.Config[int]{Name: "orders", MaxConns: 3, LeakThreshold: time.Hour,
				Dial: func(context.Context) (int, error) { return 1, nil }})
			if err != nil {
				t.Fatal(err)
			}
			oldest := holdForReport(t, p)
			time.Sleep(2 * time.Second)
			newer := holdForReport(t, p)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			err = p.Close(ctx)
			got := strings.Replace(err.Error(), "github.com/shoalpool/shoal_test.holdForReport", "main.report", 1)
			if want := operatingLine(t, "close: context deadline exceeded with"); got != want {
				t.Errorf("the pool writes\n\t%s\noperating.md shows\n\t%s", got, want)
			}
			oldest.Release()
			newer.Release()
			_ = p.Close(context.Background())
		})
	})
	t.Run("config and MaxWaiters", func(t *testing.T) {
		doc, err := os.ReadFile("docs/operating.md")
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(doc)), " ")
		dial := func(context.Context) (int, error) { return 1, nil }
		_, err = shoal.New(shoal.Config[int]{MaxConns: 16, MinIdle: 20, Dial: dial})
		if err == nil || !strings.Contains(text, "`"+err.Error()+"`") {
			t.Errorf("New with MinIdle 20 above MaxConns 16: %v, which operating.md does not show", err)
		}
		synctest.Test(t, func(t *testing.T) {
			p, err := shoal.New(shoal.Config[int]{MaxConns: 1, MaxWaiters: 100, Dial: dial})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background())
			l, err := p.Acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for range 100 {
				go func() {
					if l, err := p.Acquire(ctx); err == nil {
						l.Release()
					}
				}()
			}
			synctest.Wait()
			_, err = p.Acquire(context.Background())
			m := regexp.MustCompile(`\("(pool exhausted: [^"]+)"\)`).FindStringSubmatch(text)
			if m == nil {
				t.Fatal(`operating.md no longer quotes ("pool exhausted: ...")`)
			}
			if !errors.Is(err, shoal.ErrExhausted) || !strings.Contains(err.Error(), ": acquire: "+m[1]+" (waited") {
				t.Errorf("the 101st caller: %v; operating.md shows its cause as %q", err, m[1])
			}
			cancel()
		})
	})
}
