package dataset

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Writer creates a dataset atomically: files are written into a hidden
// temporary directory <datasets>/.tmp-<name>-<random>/ and renamed to
// <datasets>/<name> by Commit only after the result passes Open's checks.
// Abort (or a failed Commit) removes the temporary directory, so a failed
// generator or importer never leaves a partial dataset behind.
type Writer struct {
	root  string
	name  string
	tmp   string
	force bool
	files map[string]*os.File
	done  bool
}

// NewWriter starts writing dataset name under datasetsDir (created if
// missing). Unless force is set it fails with ErrExists when the dataset
// already exists; with force the old dataset is replaced at Commit.
func NewWriter(datasetsDir, name string, force bool) (*Writer, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(datasetsDir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", datasetsDir, err)
	}
	final := filepath.Join(datasetsDir, name)
	if !force {
		if _, err := os.Lstat(final); err == nil {
			return nil, fmt.Errorf("%w: %s (use --force to replace it)", ErrExists, final)
		}
	}
	tmp := filepath.Join(datasetsDir, ".tmp-"+name+"-"+randHex())
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", tmp, err)
	}
	return &Writer{root: datasetsDir, name: name, tmp: tmp, force: force, files: map[string]*os.File{}}, nil
}

// Dir is the temporary directory being written.
func (w *Writer) Dir() string { return w.tmp }

// Name is the dataset name the writer will commit to.
func (w *Writer) Name() string { return w.name }

// Create creates one of the dataset's files in the temporary directory. The
// Writer keeps the file and syncs and closes it at Commit; callers may also
// close it themselves.
func (w *Writer) Create(file string) (*os.File, error) {
	if w.done {
		return nil, errors.New("dataset writer already finished")
	}
	if filepath.Base(file) != file || file == "." || file == ".." {
		return nil, fmt.Errorf("dataset writer: bad file name %q", file)
	}
	p := filepath.Join(w.tmp, file)
	f, err := os.Create(p)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", p, err)
	}
	w.files[file] = f
	return f, nil
}

// FinalDir is the directory the dataset has after Commit.
func (w *Writer) FinalDir() string { return filepath.Join(w.root, w.name) }

// Commit is CommitStreaming followed by loading the committed dataset
// (meta.json and indptr) for the caller.
func (w *Writer) Commit(m Meta) (*Dataset, error) {
	if err := w.CommitStreaming(m); err != nil {
		return nil, err
	}
	return openChecked(w.FinalDir())
}

// CommitStreaming syncs and closes every created file, fills in meta's
// format, dtypes, name, file sizes and creation time, writes meta.json,
// verifies the result with Open's checks (streaming, memory independent of
// size) and renames the temporary directory to its final name. On any
// error it removes the temporary directory.
func (w *Writer) CommitStreaming(m Meta) (err error) {
	if w.done {
		return errors.New("dataset writer already finished")
	}
	defer func() {
		if err != nil {
			w.Abort()
		}
	}()
	for name, f := range w.files {
		if err := f.Sync(); err != nil && !errors.Is(err, os.ErrClosed) {
			return fmt.Errorf("sync %s: %w", name, err)
		}
		if err := f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			return fmt.Errorf("close %s: %w", name, err)
		}
	}
	m.Format = FormatVersion
	m.Name = w.name
	m.Dtypes = StandardDtypes
	if m.Created.IsZero() {
		m.Created = time.Now().UTC().Truncate(time.Second)
	}
	m.Files = map[string]int64{}
	for _, f := range DataFiles {
		st, err := os.Stat(filepath.Join(w.tmp, f))
		if err != nil {
			return fmt.Errorf("dataset writer: %s was not written: %w", f, err)
		}
		m.Files[f] = st.Size()
	}
	if err := m.check(); err != nil {
		return fmt.Errorf("dataset writer produced inconsistent files: %w", err)
	}
	if err := writeMeta(w.tmp, &m); err != nil {
		return err
	}
	if _, err := verifyDir(w.tmp, false); err != nil {
		return fmt.Errorf("dataset writer: verify before commit: %w", err)
	}
	final := filepath.Join(w.root, w.name)
	var old string
	if _, err := os.Lstat(final); err == nil {
		if !w.force {
			return fmt.Errorf("%w: %s (appeared while writing; use --force to replace it)", ErrExists, final)
		}
		old = filepath.Join(w.root, ".old-"+w.name+"-"+randHex())
		if err := os.Rename(final, old); err != nil {
			return fmt.Errorf("move old dataset aside: %w", err)
		}
	}
	if err := os.Rename(w.tmp, final); err != nil {
		if old != "" {
			_ = os.Rename(old, final)
		}
		return fmt.Errorf("rename %s to %s: %w", w.tmp, final, err)
	}
	w.done = true
	syncDir(w.root)
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("remove replaced dataset %s: %w", old, err)
		}
	}
	return nil
}

// Abort closes the files and removes the temporary directory. It is a
// no-op after a successful Commit, so `defer w.Abort()` is the usual form.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	for _, f := range w.files {
		_ = f.Close()
	}
	_ = os.RemoveAll(w.tmp)
}

func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		_ = f.Sync()
		_ = f.Close()
	}
}

func randHex() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Sprintf("%x", time.Now().UnixNano())
	}
	return hex.EncodeToString(b[:])
}
