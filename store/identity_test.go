package store_test

import (
	"context"
	"regexp"
	"testing"

	"outcore/store"
	"outcore/store/storetest"
)

// TestIdentity: a new database gets a random identity that stays when it
// is opened again; another new database gets another; a database that had
// runs before identities existed gets "" (its runs keep runs/<id>/).
func TestIdentity(t *testing.T) {
	ctx := context.Background()
	open := func(dir string) string {
		t.Helper()
		s, err := store.OpenDataDir(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		id, err := s.Identity(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	dir := t.TempDir()
	a := open(dir)
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(a) {
		t.Fatalf("identity %q", a)
	}
	if again := open(dir); again != a {
		t.Fatalf("identity changed on reopening: %q then %q", a, again)
	}
	if b := open(t.TempDir()); b == a {
		t.Fatalf("two databases share identity %q", a)
	}
	legacy := t.TempDir()
	if _, _, err := storetest.LegacyDatabase(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	if id := open(legacy); id != "" {
		t.Fatalf("a database with runs before identities got %q, want \"\" (its runs' directories stay)", id)
	}
}
