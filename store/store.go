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
	"syscall"
	"time"

	"github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
	"golang.org/x/sys/unix"

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
	// ErrDiskFull: a write failed because the file system is full. The
	// transaction was rolled back; retrying once space is freed succeeds.
	ErrDiskFull = errors.New("no space left on device")
	// ErrGone: the database file was deleted or replaced while this
	// process had it open; nothing more is written (it would go to the
	// unlinked file) until the process is restarted.
	ErrGone = errors.New("database file deleted or replaced")
)

// Store is an open outcore database. It is safe for concurrent use.
type Store struct {
	path string
	w    *sql.DB // the single writer connection
	r    *sql.DB // readers
	wmu  sync.Mutex
	// dev and ino identify the file opened; Update refuses to write when
	// the path no longer names it.
	dev, ino uint64
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
	if err := checkWritable(path); err != nil {
		return nil, err
	}
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
	st := &Store{path: path, w: w, r: r}
	if st.dev, st.ino, err = fileID(path); err != nil {
		st.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return st, nil
}

// checkWritable says in words why the database cannot be written: SQLite
// reports a read-only directory as "unable to open database file: no such
// file or directory". The directory must be writable (the WAL and its
// index live beside the database), and so must an existing file.
func checkWritable(path string) error {
	dir := filepath.Dir(path)
	if err := unix.Access(dir, unix.W_OK); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("open %s: the folder %s does not exist", path, dir)
		}
		return fmt.Errorf("open %s: the folder %s is not writable (%v); outcore keeps its database, logs and datasets there, so give a writable --data-dir", path, dir, err)
	}
	if err := unix.Access(path, unix.W_OK); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("open %s: the database file is not writable (%v)", path, err)
	}
	return nil
}

// fileID returns the device and inode of path.
func fileID(path string) (dev, ino uint64, err error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, 0, err
	}
	return uint64(st.Dev), st.Ino, nil
}

// checkFile fails with ErrGone when the database path no longer names the
// file this store opened (deleted, or replaced by another file).
func (s *Store) checkFile() error {
	dev, ino, err := fileID(s.path)
	switch {
	case errors.Is(err, unix.ENOENT):
		return fmt.Errorf("%w: %s no longer exists; writes would be lost with the unlinked file, so none are made — restart outcore (a new, empty database is created, or restore the file)", ErrGone, s.path)
	case err != nil:
		return fmt.Errorf("database %s: %w", s.path, err)
	case dev != s.dev || ino != s.ino:
		return fmt.Errorf("%w: %s is another file than the one opened; restart outcore to use it", ErrGone, s.path)
	}
	return nil
}

// isDiskFull reports whether err says the file system is full (SQLite's
// SQLITE_FULL, or ENOSPC from a file write).
func isDiskFull(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrFull {
		return true
	}
	return errors.Is(err, syscall.ENOSPC)
}

// IsDiskFull reports whether err says the file system is full, from the
// store (ErrDiskFull) or from a file write (ENOSPC).
func IsDiskFull(err error) bool { return errors.Is(err, ErrDiskFull) || isDiskFull(err) }

// classify wraps a failed write's error with ErrDiskFull when the file
// system is full, so callers can tell it from a bug and retry.
func classify(err error) error {
	if err != nil && !errors.Is(err, ErrDiskFull) && isDiskFull(err) {
		return fmt.Errorf("%w: %v", ErrDiskFull, err)
	}
	return err
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
//
// Each call first checks that the database file is still the one opened
// (ErrGone otherwise). A write that fails because the disk is full
// returns an error wrapping ErrDiskFull; nothing of it was committed.
func (s *Store) Update(ctx context.Context, fn func(*Tx) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkFile(); err != nil {
		return err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return classify(fmt.Errorf("begin write: %w", err))
	}
	t := &Tx{tx: tx, ctx: ctx, now: time.Now()}
	if err := fn(t); err != nil {
		tx.Rollback()
		return classify(err)
	}
	if err := tx.Commit(); err != nil {
		tx.Rollback()
		return classify(fmt.Errorf("commit: %w", err))
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
