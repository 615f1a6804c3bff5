// Package store is outcore's SQLite database: experiments, their runs, the
// epochs and per-second samples each run reported, datasets, and the event
// log behind the dashboard's live updates. The schema lives in
// outcore/migrations and is applied by Open.
//
// The database is one file, <datadir>/outcore.db, in WAL mode so readers
// never block the writer. All writes go through one connection (Update
// serialises them); reads use a small pool. A write is durable once Update
// returns: with synchronous=NORMAL in WAL mode a committed transaction
// survives the death of the process (SIGKILL), though not necessarily a
// power cut.
//
// Times are time.Time in Go and unix milliseconds in the database.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver

	"outcore/migrations"
)

// FileName is the database's file name inside a data directory.
const FileName = "outcore.db"

// Sentinel errors callers branch on; returned errors wrap them.
var (
	// ErrNotFound: no experiment, run or dataset with that id or name.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the row is not in a state that allows the change
	// (e.g. retrying a run that is still queued).
	ErrConflict = errors.New("conflict")
)

// Store is an open outcore database. It is safe for concurrent use.
type Store struct {
	path string
	w    *sql.DB // the single writer connection
	r    *sql.DB // readers
	wmu  sync.Mutex
}

// Path returns the database file's path for a data directory.
func Path(dataDir string) string { return filepath.Join(dataDir, FileName) }

// OpenDataDir opens (creating if needed) the database of a data directory.
func OpenDataDir(ctx context.Context, dataDir string) (*Store, error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("create data directory %s: %w", dataDir, err)
	}
	return Open(ctx, Path(dataDir))
}

// dsn builds the go-sqlite3 connection string for path.
func dsn(path string, writer bool) string {
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_busy_timeout", "5000")
	q.Set("_foreign_keys", "on")
	q.Set("_synchronous", "NORMAL")
	if writer {
		// Take the write lock at BEGIN, so a transaction never fails
		// half-way with SQLITE_BUSY when upgrading from a read lock.
		q.Set("_txlock", "immediate")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Open opens (creating if needed) the database at path and applies pending
// migrations.
func Open(ctx context.Context, path string) (*Store, error) {
	w, err := sql.Open("sqlite3", dsn(path, true))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if _, err := migrations.Apply(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	r, err := sql.Open("sqlite3", dsn(path, false))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(4)
	return &Store{path: path, w: w, r: r}, nil
}

// Close closes the database.
func (s *Store) Close() error {
	return errors.Join(s.r.Close(), s.w.Close())
}

// FilePath returns the database file's path.
func (s *Store) FilePath() string { return s.path }

// Tx is a write transaction handed to Update's function.
type Tx struct {
	tx  *sql.Tx
	ctx context.Context
	now time.Time
}

// Now is the time at which the transaction began; rows written in one
// transaction share it.
func (t *Tx) Now() time.Time { return t.now }

// Update runs fn in one write transaction and commits it when fn returns
// nil (rolls back otherwise). Writers are serialised: at most one Update
// runs at a time in this process, and SQLite's lock (with a 5 s busy
// timeout) orders it against other processes.
func (s *Store) Update(ctx context.Context, fn func(*Tx) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin write: %w", err)
	}
	t := &Tx{tx: tx, ctx: ctx, now: time.Now()}
	if err := fn(t); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// ms converts a time to unix milliseconds (0 for the zero time).
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMS converts unix milliseconds to a time (the zero time for 0 or NULL).
func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid || v.Int64 == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64)
}

// nullMS converts a time to a nullable millisecond value.
func nullMS(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
