package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Experiments are organised by a name, notes and tags (DESIGN §6): what a
// researcher searches and filters a long list by.

// Limits of what SetExperimentMeta accepts.
const (
	MaxNameLen  = 100 // as a grid's name (grid.MaxNameLen)
	MaxNotesLen = 20000
	MaxTagLen   = 40
	MaxTags     = 20
)

// ErrInvalidMeta wraps the errors of SetExperimentMeta's checks.
var ErrInvalidMeta = errors.New("invalid experiment name, notes or tags")

// ExperimentMeta is what a person may change of an experiment.
type ExperimentMeta struct {
	Name  string
	Notes string
	Tags  []string
}

// NormaliseTags trims, lower-cases, de-duplicates and sorts tags, and
// checks each: 1 to MaxTagLen letters, digits, '-', '_', '.', ':' or '/'.
func NormaliseTags(tags []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || seen[t] {
			continue
		}
		if utf8.RuneCountInString(t) > MaxTagLen {
			return nil, fmt.Errorf("%w: tag %q is longer than %d characters", ErrInvalidMeta, t, MaxTagLen)
		}
		for _, r := range t {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-_.:/", r) {
				return nil, fmt.Errorf("%w: tag %q: %q is not allowed (letters, digits and - _ . : / only)", ErrInvalidMeta, t, r)
			}
		}
		seen[t] = true
		out = append(out, t)
	}
	if len(out) > MaxTags {
		return nil, fmt.Errorf("%w: %d tags, at most %d", ErrInvalidMeta, len(out), MaxTags)
	}
	sort.Strings(out)
	return out, nil
}

// SetExperimentMeta renames an experiment and replaces its notes and tags.
// The error wraps ErrInvalidMeta for a name, notes or tag it refuses
// (saying which) and ErrNotFound when there is no such experiment.
func (t *Tx) SetExperimentMeta(id int64, m ExperimentMeta) error {
	name := strings.TrimSpace(m.Name)
	if n := utf8.RuneCountInString(name); n > MaxNameLen {
		return fmt.Errorf("%w: name has %d characters, at most %d", ErrInvalidMeta, n, MaxNameLen)
	}
	if strings.ContainsAny(name, "\n\r\t") {
		return fmt.Errorf("%w: name is one line", ErrInvalidMeta)
	}
	if len(m.Notes) > MaxNotesLen {
		return fmt.Errorf("%w: notes are longer than %d bytes", ErrInvalidMeta, MaxNotesLen)
	}
	if !utf8.ValidString(name) || !utf8.ValidString(m.Notes) {
		return fmt.Errorf("%w: name and notes must be UTF-8 text", ErrInvalidMeta)
	}
	if err := checkText("name", name, ""); err != nil {
		return err
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }); i >= 0 {
		r, _ := utf8.DecodeRuneInString(name[i:])
		return fmt.Errorf("%w: name has %U at byte %d: letters, digits, punctuation, symbols and plain spaces only", ErrInvalidMeta, r, i)
	}
	if err := checkText("notes", m.Notes, "\n\t\r"); err != nil {
		return err
	}
	tags, err := NormaliseTags(m.Tags)
	if err != nil {
		return err
	}
	res, err := t.tx.ExecContext(t.ctx, `UPDATE experiments SET name = ?, notes = ? WHERE id = ?`, name, m.Notes, id)
	if err != nil {
		return fmt.Errorf("experiment %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("experiment %d: %w", id, ErrNotFound)
	}
	if _, err := t.tx.ExecContext(t.ctx, `DELETE FROM experiment_tags WHERE experiment_id = ?`, id); err != nil {
		return fmt.Errorf("experiment %d tags: %w", id, err)
	}
	for _, tag := range tags {
		if _, err := t.tx.ExecContext(t.ctx, `INSERT INTO experiment_tags(experiment_id, tag) VALUES (?, ?)`, id, tag); err != nil {
			return fmt.Errorf("experiment %d tag %q: %w", id, tag, err)
		}
	}
	return nil
}

// checkText refuses control characters (but those in allow), and the
// invisible format characters, bidirectional overrides and isolates among
// them, which make a name print as something else in a terminal or a
// page (a "Trojan source" name).
func checkText(field, s, allow string) error {
	for i, r := range s {
		if strings.ContainsRune(allow, r) {
			continue
		}
		switch {
		case unicode.IsControl(r):
			return fmt.Errorf("%w: %s has a control character (%U at byte %d); only printable text is kept", ErrInvalidMeta, field, r, i)
		case unicode.Is(unicode.Cf, r):
			return fmt.Errorf("%w: %s has an invisible formatting character (%U at byte %d: bidirectional overrides and the like change how text prints)", ErrInvalidMeta, field, r, i)
		}
	}
	return nil
}

// StoredDigest is a finished run's digest as a reader stored it: opaque
// bytes (report's encoding of its Digest) and the run's epoch count when
// it was made.
type StoredDigest struct {
	Epochs int
	Data   []byte
}

// RunDigests returns the stored digests of an experiment's current runs
// whose epoch count still matches, by run id: one query.
func (s *Store) RunDigests(ctx context.Context, experimentID int64) (map[int64]StoredDigest, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, digest_epochs, digest FROM runs
		WHERE experiment_id = ? AND superseded = 0 AND digest IS NOT NULL AND digest_epochs = epochs_done`, experimentID)
	if err != nil {
		return nil, fmt.Errorf("digests of experiment %d: %w", experimentID, err)
	}
	defer rows.Close()
	out := map[int64]StoredDigest{}
	for rows.Next() {
		var id int64
		var d StoredDigest
		if err := rows.Scan(&id, &d.Epochs, &d.Data); err != nil {
			return nil, fmt.Errorf("digests of experiment %d: %w", experimentID, err)
		}
		out[id] = d
	}
	return out, rows.Err()
}

// SaveRunDigests stores digests of finished runs; one whose run is not
// finished, or whose epoch count no longer matches, is skipped.
func (s *Store) SaveRunDigests(ctx context.Context, digests map[int64]StoredDigest) error {
	if len(digests) == 0 {
		return nil
	}
	return s.Update(ctx, func(tx *Tx) error {
		for id, d := range digests {
			if _, err := tx.tx.ExecContext(tx.ctx, `UPDATE runs SET digest = ?, digest_epochs = ?
				WHERE id = ? AND epochs_done = ? AND status NOT IN ('queued', 'running')`, d.Data, d.Epochs, id, d.Epochs); err != nil {
				return fmt.Errorf("save digest of run %d: %w", id, err)
			}
		}
		return nil
	})
}
