package shoalpgx

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
)

// hookPanic is what a hook of the Config that panicked in the pool's own
// work (a dial, a close) turns into: an error that names the hook. The
// core recovers such panics too, but names its own hooks (Dial,
// OnDisconnect), which are no names of the caller's.
type hookPanic struct {
	hook  string // the Config field: BeforeConnect, AfterConnect, BeforeClose
	value any    // what the hook panicked with
}

func (e *hookPanic) Error() string { return fmt.Sprintf("%s panicked: %v", e.hook, e.value) }

// callBeforeConnect runs the BeforeConnect hook; a panic fails the dial
// with an error naming the hook.
func callBeforeConnect(ctx context.Context, hook func(context.Context, *pgx.ConnConfig) error, cc *pgx.ConnConfig) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &hookPanic{hook: "BeforeConnect", value: r}
		}
	}()
	return hook(ctx, cc)
}

// callBeforeClose runs the BeforeClose hook. A panic is logged under the
// hook's name and goes no further: the connection closes all the same.
func (p *Pool) callBeforeClose(hook func(*pgx.Conn), conn *pgx.Conn) {
	defer func() {
		if r := recover(); r != nil {
			l := p.config.Logger
			if l == nil {
				l = slog.Default() // as the core's lines
			}
			l.LogAttrs(context.Background(), slog.LevelWarn, "shoalpgx: hook panicked; the connection is closed all the same",
				slog.String("pool", p.config.Name), slog.String("error", (&hookPanic{hook: "BeforeClose", value: r}).Error()))
		}
	}()
	hook(conn)
}
