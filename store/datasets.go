package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Dataset is a catalogue entry for a dataset experiments ran on. The
// dataset's files live in <datadir>/datasets/<name>/; this row is a copy of
// its meta.json taken when an experiment used it.
type Dataset struct {
	ID         int64
	Name       string
	Path       string
	Nodes      int64
	Edges      int64
	FeatureDim int
	Classes    int
	Source     string          // "generator", "linqs", "npy", "ogb", ...
	Meta       json.RawMessage // meta.json as read
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// UpsertDataset inserts d or, when a dataset of that name exists, updates it.
// It sets d.ID.
func (t *Tx) UpsertDataset(d *Dataset) error {
	meta := d.Meta
	if len(meta) == 0 {
		meta = json.RawMessage("{}")
	}
	now := ms(t.now)
	err := t.tx.QueryRowContext(t.ctx, `
		INSERT INTO datasets(name, path, nodes, edges, feature_dim, classes, source, meta_json, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(name) DO UPDATE SET path=excluded.path, nodes=excluded.nodes, edges=excluded.edges,
			feature_dim=excluded.feature_dim, classes=excluded.classes, source=excluded.source,
			meta_json=excluded.meta_json, updated_at=excluded.updated_at
		RETURNING id`,
		d.Name, d.Path, d.Nodes, d.Edges, d.FeatureDim, d.Classes, d.Source, string(meta), now, now).Scan(&d.ID)
	if err != nil {
		return fmt.Errorf("upsert dataset %s: %w", d.Name, err)
	}
	return nil
}

const datasetCols = `id, name, path, nodes, edges, feature_dim, classes, source, meta_json, created_at, updated_at`

func scanDataset(sc interface{ Scan(...any) error }) (Dataset, error) {
	var d Dataset
	var meta string
	var c, u sql.NullInt64
	err := sc.Scan(&d.ID, &d.Name, &d.Path, &d.Nodes, &d.Edges, &d.FeatureDim, &d.Classes, &d.Source, &meta, &c, &u)
	d.Meta = json.RawMessage(meta)
	d.CreatedAt, d.UpdatedAt = fromMS(c), fromMS(u)
	return d, err
}

// Datasets lists the catalogued datasets by name.
func (s *Store) Datasets(ctx context.Context) ([]Dataset, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+datasetCols+` FROM datasets ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list datasets: %w", err)
	}
	defer rows.Close()
	var out []Dataset
	for rows.Next() {
		d, err := scanDataset(rows)
		if err != nil {
			return nil, fmt.Errorf("list datasets: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// Dataset returns the catalogued dataset of that name; the error wraps
// ErrNotFound when there is none.
func (s *Store) Dataset(ctx context.Context, name string) (Dataset, error) {
	d, err := scanDataset(s.r.QueryRowContext(ctx, `SELECT `+datasetCols+` FROM datasets WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return d, fmt.Errorf("dataset %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return d, fmt.Errorf("dataset %q: %w", name, err)
	}
	return d, nil
}
