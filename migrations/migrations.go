// Package migrations holds outcore's SQLite schema as numbered SQL files
// (0001_init.sql, 0002_…) embedded in the binary, and applies them in order.
//
// The schema version is SQLite's PRAGMA user_version: file NNNN_*.sql moves
// the database from version NNNN-1 to NNNN. Apply runs every pending file,
// each in its own transaction together with the user_version bump, so a
// crash leaves the database at a whole version. Applying to an up-to-date
// database does nothing.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

//go:embed *.sql
var files embed.FS

// ErrNewerSchema is returned when the database was written by a newer
// outcore whose schema version this build does not know.
var ErrNewerSchema = errors.New("database schema is newer than this build")

// Migration is one numbered SQL file.
type Migration struct {
	Version int    // the number in the file name
	Name    string // the file name
	SQL     string
}

// All returns the embedded migrations in version order. It fails if the
// numbering has a gap or a duplicate (a packaging mistake).
func All() ([]Migration, error) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	var ms []Migration
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		if !ok {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", name)
		}
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: bad version number %q", name, num)
		}
		b, err := files.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d (numbering must be 1, 2, 3, … without gaps)", m.Name, i+1)
		}
	}
	return ms, nil
}

// Latest is the schema version the embedded migrations lead to.
func Latest() int {
	ms, err := All()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}

// Version reads the database's PRAGMA user_version.
func Version(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// Apply brings db to the latest schema version and returns the versions it
// applied (none when the database is current). db should be the single writer
// connection: each migration runs in one transaction with its version bump.
func Apply(ctx context.Context, db *sql.DB) ([]int, error) {
	ms, err := All()
	if err != nil {
		return nil, err
	}
	cur, err := Version(ctx, db)
	if err != nil {
		return nil, err
	}
	if cur > len(ms) {
		return nil, fmt.Errorf("%w: database is at version %d, this build knows up to %d", ErrNewerSchema, cur, len(ms))
	}
	var applied []int
	for _, m := range ms[cur:] {
		if err := applyOne(ctx, db, m); err != nil {
			return applied, err
		}
		applied = append(applied, m.Version)
	}
	return applied, nil
}

func applyOne(ctx context.Context, db *sql.DB, m Migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migration %s: begin: %w", m.Name, err)
	}
	defer tx.Rollback()
	// Re-read the version inside the transaction: another process may have
	// migrated between our read and our write lock.
	var cur int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
		return fmt.Errorf("migration %s: read version: %w", m.Name, err)
	}
	if cur >= m.Version {
		return nil
	}
	if cur != m.Version-1 {
		return fmt.Errorf("migration %s: database at version %d, expected %d", m.Name, cur, m.Version-1)
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	// PRAGMA does not take bound parameters; the version is an int we control.
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(m.Version)); err != nil {
		return fmt.Errorf("migration %s: set version: %w", m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migration %s: commit: %w", m.Name, err)
	}
	return nil
}
