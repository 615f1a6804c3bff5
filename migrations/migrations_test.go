package migrations_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"outcore/migrations"
)

func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "m.db")+"?_foreign_keys=on&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func tables(t *testing.T, db *sql.DB) map[string]bool {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type IN ('table', 'index')`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		got[n] = true
	}
	return got
}

func TestApplyFromZeroAndIdempotent(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	applied, err := migrations.Apply(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != migrations.Latest() || migrations.Latest() < 1 {
		t.Fatalf("applied %v, latest %d", applied, migrations.Latest())
	}
	v, err := migrations.Version(ctx, db)
	if err != nil || v != migrations.Latest() {
		t.Fatalf("version %d (%v), want %d", v, err, migrations.Latest())
	}
	got := tables(t, db)
	for _, want := range []string{"datasets", "experiments", "runs", "epochs", "samples", "run_events",
		"runs_queue", "runs_experiment_status", "runs_compare", "run_events_run"} {
		if !got[want] {
			t.Errorf("missing %s after migration (have %v)", want, got)
		}
	}
	again, err := migrations.Apply(ctx, db)
	if err != nil || len(again) != 0 {
		t.Fatalf("second Apply applied %v, err %v; want nothing", again, err)
	}
	if v2, _ := migrations.Version(ctx, db); v2 != v {
		t.Fatalf("version moved from %d to %d", v, v2)
	}
}

func TestApplyRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if _, err := db.Exec(`PRAGMA user_version = 999`); err != nil {
		t.Fatal(err)
	}
	_, err := migrations.Apply(ctx, db)
	if !errors.Is(err, migrations.ErrNewerSchema) {
		t.Fatalf("err = %v, want ErrNewerSchema", err)
	}
	if got := tables(t, db); len(got) != 0 {
		t.Fatalf("tables created on a refused database: %v", got)
	}
}

func TestAllNumberedWithoutGaps(t *testing.T) {
	ms, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		if m.Version != i+1 || m.SQL == "" {
			t.Fatalf("migration %d: %+v", i, m.Name)
		}
	}
}
