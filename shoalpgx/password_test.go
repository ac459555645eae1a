package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/syncbuf"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestWrongPasswordNeverShown connects with a wrong password and looks for
// it, and for the right one, in every error, every log line and the
// config's String.
func TestWrongPasswordNeverShown(t *testing.T) {
	good := testConfig(t, nil)
	rightPassword := good.ConnConfig.Password
	const wrongPassword = "wrong-Pa55word-zq"

	var logs syncbuf.Buffer
	cfg := testConfig(t, func(c *Config) {
		c.ConnConfig.Password = wrongPassword
		c.MaxConns = 2
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	p := newPoolFor(t, cfg)

	var texts []string
	show := func(err error) {
		texts = append(texts, err.Error(), fmt.Sprintf("%v|%+v|%#v|%q", err, err, err, err))
		for e := err; e != nil; e = errors.Unwrap(e) {
			texts = append(texts, fmt.Sprintf("%#v", e))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := p.Ping(ctx)
	if err == nil {
		t.Fatal("Ping with a wrong password succeeded")
	}
	show(err)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "28P01" {
		t.Errorf("error %v does not unwrap to the server's invalid_password (28P01)", err)
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		t.Error("error still carries pgconn.ConnectError, whose Config holds the password")
	}
	if _, err := p.Exec(ctx, "select 1"); err != nil {
		show(err)
	}
	if err := p.QueryRow(ctx, "select 1").Scan(new(int)); err != nil {
		show(err)
	}
	texts = append(texts, cfg.String(), fmt.Sprint(cfg), fmt.Sprintf("%+v %#v", cfg, cfg))

	for _, s := range append(texts, logs.String()) {
		for _, pw := range []string{wrongPassword, rightPassword} {
			if pw != "" && strings.Contains(s, pw) {
				t.Fatalf("password shown: %s", s)
			}
		}
	}
	if !strings.Contains(logs.String(), "dial failed") {
		t.Errorf("the failed dial was not logged (logs: %q)", logs.String())
	}
	t.Logf("error: %v", err)
}

// vaultError is a hook's own error type, with the password in its text.
type vaultError struct{ pw string }

func (e *vaultError) Error() string { return "vault rejected " + e.pw }

// TestHookErrorIsPassedOnAsItIs: a hook's own error comes back as it was
// given (the same value, so errors.Is and errors.As see it), its text
// untouched: shoalpgx cannot know where a password sits in it, and masking
// the password's value everywhere would garble the text.
func TestHookErrorIsPassedOnAsItIs(t *testing.T) {
	const pw = "a"
	errOther := errors.New("and the network too")
	for _, hookErr := range []error{&vaultError{pw: pw}, errors.Join(&vaultError{pw: pw}, errOther)} {
		if err := scrubConnectError(hookErr); err != hookErr {
			t.Errorf("scrubConnectError(%v) = %v, want the hook's error itself", hookErr, err)
		}
	}
}
