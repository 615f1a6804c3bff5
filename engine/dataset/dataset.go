// Package dataset implements outcore's on-disk dataset format (DESIGN §4):
// one directory per dataset holding meta.json, a CSC graph (indptr.bin,
// indices.bin), a float32 feature matrix (features.bin), int32 labels and
// int64 train/val/test id lists. It opens and verifies datasets, writes new
// ones atomically (Writer), generates synthetic power-law graphs with planted
// communities (Generate) and imports LINQS, NumPy and OGB data.
//
// All binary files are little-endian with no header, so features.bin is byte
// for byte the body of a C-order float32 .npy of shape (N, D).
package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"outcore/internal/osutil"
)

// Dataset is an opened, verified dataset. Indptr (N+1 entries) is held in
// memory, as in the papers; indices and features stay on disk.
type Dataset struct {
	// Dir is the dataset's directory.
	Dir string
	// Meta is the content of meta.json.
	Meta Meta
	// Indptr holds the CSC column pointers: the in-neighbours of v are
	// indices[Indptr[v]:Indptr[v+1]].
	Indptr []int64
}

// Open reads meta.json and checks the dataset in dir: every file's size
// against meta.json, indptr starting at 0, non-decreasing and ending at the
// edge count, every index, label and split id in range. Indices are streamed
// in chunks (and dropped from the page cache afterwards), so Open's memory is
// the indptr array plus a few MiB. Failures wrap ErrNotFound or ErrCorrupt
// and name the file and the problem.
func Open(dir string) (*Dataset, error) { return verifyDir(dir, true) }

// OpenQuick opens dir checking only what costs O(Nodes): meta.json, every
// file's size, and indptr (start 0, non-decreasing, ends at the edge
// count). It skips the scans of indices, labels and splits, which read
// 8×Edges bytes; use it when the dataset was verified before (e.g. by Open
// once per experiment, or by `outcore data verify`) and start-up time
// matters.
func OpenQuick(dir string) (*Dataset, error) {
	if !osutil.LittleEndian() {
		return nil, errors.New("dataset: this build requires a little-endian host")
	}
	m, err := ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Dir: dir, Meta: m}
	if err := d.checkSizes(); err != nil {
		return nil, err
	}
	if d.Indptr, err = d.checkIndptr(true); err != nil {
		return nil, err
	}
	return d, nil
}

// verifyDir runs Open's checks; without keepIndptr it streams indptr too and
// returns a Dataset whose Indptr is nil (memory independent of size).
func verifyDir(dir string, keepIndptr bool) (*Dataset, error) {
	if !osutil.LittleEndian() {
		return nil, errors.New("dataset: this build requires a little-endian host")
	}
	m, err := ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Dir: dir, Meta: m}
	if err := d.checkSizes(); err != nil {
		return nil, err
	}
	if d.Indptr, err = d.checkIndptr(keepIndptr); err != nil {
		return nil, err
	}
	if err := d.checkIndices(); err != nil {
		return nil, err
	}
	if err := d.checkLabels(); err != nil {
		return nil, err
	}
	for _, s := range []string{SplitTrain, SplitVal, SplitTest} {
		if err := d.checkSplit(s); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// openChecked opens a dataset that was just verified (by a Writer): it reads
// meta.json and indptr without repeating the scans.
func openChecked(dir string) (*Dataset, error) {
	m, err := ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Dir: dir, Meta: m}
	if d.Indptr, err = d.loadIndptr(); err != nil {
		return nil, err
	}
	return d, nil
}

// OpenByName opens the dataset called name under dataDir (see DatasetsDir).
func OpenByName(dataDir, name string) (*Dataset, error) {
	dir, err := DirByName(dataDir, name)
	if err != nil {
		return nil, err
	}
	return Open(dir)
}

// DirByName returns the directory of dataset name under dataDir, failing
// with ErrBadName or ErrNotFound.
func DirByName(dataDir, name string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	dir := filepath.Join(DatasetsDir(dataDir), name)
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%w: %q in %s", ErrNotFound, name, DatasetsDir(dataDir))
		}
		return "", fmt.Errorf("stat %s: %w", dir, err)
	}
	return dir, nil
}

// Path returns the path of one of the dataset's files (e.g. FeaturesFile).
func (d *Dataset) Path(file string) string { return filepath.Join(d.Dir, file) }

// Nodes is the node count.
func (d *Dataset) Nodes() int64 { return d.Meta.Nodes }

// Edges is the edge count (entries of indices.bin).
func (d *Dataset) Edges() int64 { return d.Meta.Edges }

// RowBytes is the size in bytes of one feature row (FeatureDim×4).
func (d *Dataset) RowBytes() int64 { return d.Meta.RowBytes() }

// FeatureBytes is the size in bytes of features.bin.
func (d *Dataset) FeatureBytes() int64 { return d.Meta.FeatureBytes() }

// InDegree is the number of in-neighbours of v.
func (d *Dataset) InDegree(v int64) int64 { return d.Indptr[v+1] - d.Indptr[v] }

// Labels reads labels.bin whole (N int32, -1 = unlabeled).
func (d *Dataset) Labels() ([]int32, error) {
	out := make([]int32, d.Meta.Nodes)
	if err := readWhole(d.Path(LabelsFile), osutil.Bytes(out)); err != nil {
		return nil, err
	}
	return out, nil
}

// Split reads the ids of one split: SplitTrain, SplitVal or SplitTest.
func (d *Dataset) Split(name string) ([]int64, error) {
	file, n, err := d.splitFile(name)
	if err != nil {
		return nil, err
	}
	out := make([]int64, n)
	if err := readWhole(d.Path(file), osutil.Bytes(out)); err != nil {
		return nil, err
	}
	return out, nil
}

// TrainIDs reads train.bin.
func (d *Dataset) TrainIDs() ([]int64, error) { return d.Split(SplitTrain) }

// ValIDs reads val.bin.
func (d *Dataset) ValIDs() ([]int64, error) { return d.Split(SplitVal) }

// TestIDs reads test.bin.
func (d *Dataset) TestIDs() ([]int64, error) { return d.Split(SplitTest) }

// LoadIndices reads indices.bin whole into memory (Edges int64). Use it only
// when the graph is known to fit; samplers of large graphs read it from disk.
func (d *Dataset) LoadIndices() ([]int64, error) {
	out := make([]int64, d.Meta.Edges)
	if err := readWhole(d.Path(IndicesFile), osutil.Bytes(out)); err != nil {
		return nil, err
	}
	return out, nil
}

// InNeighbors reads the in-neighbours of v from indices.bin with one pread.
func (d *Dataset) InNeighbors(v int64) ([]int64, error) {
	lo, hi := d.Indptr[v], d.Indptr[v+1]
	out := make([]int64, hi-lo)
	if len(out) == 0 {
		return out, nil
	}
	if err := readAt(d.Path(IndicesFile), osutil.Bytes(out), lo*8); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadFeatureRows reads rows [start, start+count) of features.bin with one
// buffered pread (count×FeatureDim float32, row-major). It is a convenience
// for tests and tools; the engine's storage backends do the real I/O.
func (d *Dataset) ReadFeatureRows(start, count int64) ([]float32, error) {
	if start < 0 || count < 0 || start+count > d.Meta.Nodes {
		return nil, fmt.Errorf("feature rows [%d,%d) outside [0,%d)", start, start+count, d.Meta.Nodes)
	}
	out := make([]float32, count*int64(d.Meta.FeatureDim))
	if len(out) == 0 {
		return out, nil
	}
	if err := readAt(d.Path(FeaturesFile), osutil.Bytes(out), start*d.RowBytes()); err != nil {
		return nil, err
	}
	return out, nil
}

func (d *Dataset) splitFile(name string) (string, int64, error) {
	switch name {
	case SplitTrain:
		return TrainFile, d.Meta.Train, nil
	case SplitVal, "valid", "validation":
		return ValFile, d.Meta.Val, nil
	case SplitTest:
		return TestFile, d.Meta.Test, nil
	}
	return "", 0, fmt.Errorf("unknown split %q (want train, val or test)", name)
}

// ValidateName checks that name can be a dataset directory name: 1–100
// characters from [A-Za-z0-9._-], not starting with '.' or '-'.
func ValidateName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrBadName)
	}
	if len(name) > 100 {
		return fmt.Errorf("%w: %q is longer than 100 characters", ErrBadName, name)
	}
	if name[0] == '.' || name[0] == '-' {
		return fmt.Errorf("%w: %q starts with %q", ErrBadName, name, name[0])
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return fmt.Errorf("%w: %q contains %q (allowed: letters, digits, '.', '_', '-')", ErrBadName, name, r)
		}
	}
	return nil
}

// Entry is one directory under the datasets folder as seen by ListEntries.
type Entry struct {
	Name string
	Meta Meta
	// Err is set when meta.json is missing or invalid.
	Err error
}

// ListEntries lists every dataset directory under dataDir, valid or not,
// sorted by name. Hidden entries (temporary directories of writers in
// progress) are skipped. A missing datasets folder yields an empty list.
func ListEntries(dataDir string) ([]Entry, error) {
	root := DatasetsDir(dataDir)
	des, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list %s: %w", root, err)
	}
	var out []Entry
	for _, de := range des {
		if !de.IsDir() || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		m, err := ReadMeta(filepath.Join(root, de.Name()))
		out = append(out, Entry{Name: de.Name(), Meta: m, Err: err})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Leftovers lists hidden directories under dataDir's datasets folder that a
// Writer creates (.tmp-<name>-<rand> while writing, .old-<name>-<rand>
// while replacing). A writer removes them itself, even on error or Ctrl-C;
// they survive only a killed process and are safe to delete when no
// generator or importer is running.
func Leftovers(dataDir string) []string {
	root := DatasetsDir(dataDir)
	des, _ := os.ReadDir(root)
	var out []string
	for _, de := range des {
		if de.IsDir() && (strings.HasPrefix(de.Name(), ".tmp-") || strings.HasPrefix(de.Name(), ".old-")) {
			out = append(out, filepath.Join(root, de.Name()))
		}
	}
	return out
}

// List returns the meta.json of every dataset under dataDir whose meta.json
// reads and checks, sorted by name (ListEntries also shows broken ones).
func List(dataDir string) ([]Meta, error) {
	es, err := ListEntries(dataDir)
	if err != nil {
		return nil, err
	}
	var out []Meta
	for _, e := range es {
		if e.Err == nil {
			out = append(out, e.Meta)
		}
	}
	return out, nil
}

func readWhole(path string, dst []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if _, err := io.ReadFull(f, dst); err != nil {
		return fmt.Errorf("%w: read %s: %v", ErrCorrupt, path, err)
	}
	return nil
}

func readAt(path string, dst []byte, off int64) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if _, err := f.ReadAt(dst, off); err != nil {
		return fmt.Errorf("read %s at %d: %w", path, off, err)
	}
	return nil
}

var le = binary.LittleEndian
