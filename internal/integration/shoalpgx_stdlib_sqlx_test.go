package integration_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/shoalpgx"
	"github.com/shoalpool/shoal/shoalpgx/stdlib"
)

// sqlx, the most common layer over database/sql, works on the driver: Get
// and Select into structs, NamedExec, and In with a rebind to $n.
func TestSQLWithSqlx(t *testing.T) {
	p := pgtest.NewPool(t, shoalpgx.ParseConfig, shoalpgx.NewWithConfig, func(c *shoalpgx.Config) { c.MaxConns = 2 })
	db := sqlx.NewDb(pgtest.DB(t, stdlib.OpenDBFromPool(p), func() shoal.Stats { return p.Stat().Shoal() }), "pgx")
	ctx := pgtest.Ctx(t)
	if _, err := db.ExecContext(ctx, `drop table if exists shoalpgx_sqlx;
		create table shoalpgx_sqlx (id bigint primary key, name text not null, score numeric, born date, tags text[])`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.ExecContext(pgtest.Ctx(t), "drop table if exists shoalpgx_sqlx") })

	type person struct {
		ID    int64     `db:"id"`
		Name  string    `db:"name"`
		Score *string   `db:"score"`
		Born  time.Time `db:"born"`
		Tags  string    `db:"tags"`
	}
	born := time.Date(1990, 5, 17, 0, 0, 0, 0, time.UTC)
	for _, row := range []map[string]any{
		{"id": 1, "name": "ana", "score": "9.50", "born": born, "tags": []string{"a", "b"}},
		{"id": 2, "name": "bo", "score": nil, "born": born.AddDate(1, 0, 0), "tags": []string{}},
		{"id": 3, "name": "cy", "score": "7", "born": born.AddDate(2, 0, 0), "tags": []string{"c"}},
	} {
		if _, err := db.NamedExecContext(ctx, "insert into shoalpgx_sqlx values (:id, :name, :score, :born, :tags)", row); err != nil {
			t.Fatal(err)
		}
	}

	var ana person
	if err := db.GetContext(ctx, &ana, "select * from shoalpgx_sqlx where name = $1", "ana"); err != nil {
		t.Fatal(err)
	}
	if ana.ID != 1 || ana.Score == nil || *ana.Score != "9.50" || !ana.Born.Equal(born) || ana.Tags != "{a,b}" {
		t.Fatalf("Get: %+v", ana)
	}

	query, args, err := sqlx.In("select * from shoalpgx_sqlx where id in (?) order by id", []int{2, 3})
	if err != nil {
		t.Fatal(err)
	}
	var people []person
	if err := db.SelectContext(ctx, &people, db.Rebind(query), args...); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range people {
		names = append(names, p.Name)
	}
	if !reflect.DeepEqual(names, []string{"bo", "cy"}) || people[0].Score != nil || people[0].Tags != "{}" {
		t.Fatalf("Select: %+v", people)
	}
}
