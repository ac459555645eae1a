package shoalpgx

import (
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/shoalpool/shoal/internal/namemask"
)

// defaultName is the name of a pool whose Config.Name is empty: where it
// connects, without the user or the password, as an operator would name
// the database ("db.internal:5432/app"; "db1:5432,db2:5432/app").
func defaultName(cc *pgx.ConnConfig) string {
	name := strings.Join(hostAddrs(cc), ",")
	if cc.Database != "" {
		name += "/" + cc.Database
	}
	return name
}

// readsName is the name of the read pool of a pool named name: apart from
// the pool's in logs and metrics, and sorted beside it.
func readsName(name string) string { return namemask.Suffixed(name, "/reads") }
