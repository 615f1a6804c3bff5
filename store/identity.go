package store

import (
	"context"
	"fmt"
	"regexp"
)

// identityRE is what an identity may be: 16 hex digits, or "" for a
// database that had runs before identities existed (migration 0007).
var identityRE = regexp.MustCompile(`^([0-9a-f]{16})?$`)

// Identity is the database's random identity, made when it was created
// (migrations/0007_db_identity.sql). Its runs' directories are keyed by it
// (runs/<identity>/<run id>/), so that a database created again, whose run
// ids restart at 1, never reuses an older database's run files. It is ""
// for a database that had runs before identities existed: its runs keep
// runs/<run id>/.
func (s *Store) Identity(ctx context.Context) (string, error) {
	var id string
	if err := s.r.QueryRowContext(ctx, `SELECT id FROM db_identity LIMIT 1`).Scan(&id); err != nil {
		return "", fmt.Errorf("database identity: %w", err)
	}
	if !identityRE.MatchString(id) {
		return "", fmt.Errorf("database identity %q: want 16 hex digits", id)
	}
	return id, nil
}
