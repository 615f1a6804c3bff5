package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// File names inside one dataset directory (DESIGN §4).
const (
	MetaFile     = "meta.json"    // Meta as JSON
	IndptrFile   = "indptr.bin"   // int64 little-endian, Nodes+1 entries (CSC column pointers)
	IndicesFile  = "indices.bin"  // int64 little-endian, Edges entries: in-neighbours of each node
	FeaturesFile = "features.bin" // float32 little-endian, Nodes×FeatureDim row-major, no padding
	LabelsFile   = "labels.bin"   // int32 little-endian, Nodes entries, -1 = unlabeled
	TrainFile    = "train.bin"    // int64 node ids of the training split
	ValFile      = "val.bin"      // int64 node ids of the validation split
	TestFile     = "test.bin"     // int64 node ids of the test split
)

// FormatVersion is the version of the on-disk layout written into meta.json.
const FormatVersion = 1

// Dtype names recorded in meta.json; the format fixes them, and Open rejects
// a meta.json that names any other.
const (
	DtypeInt64   = "int64"
	DtypeInt32   = "int32"
	DtypeFloat32 = "float32"
)

// Split names accepted by (*Dataset).Split.
const (
	SplitTrain = "train"
	SplitVal   = "val"
	SplitTest  = "test"
)

// Sentinel errors; every error returned by this package that callers may
// branch on wraps one of them with details (file, offset, value).
var (
	// ErrNotFound: no dataset (or no file of one) at the given place.
	ErrNotFound = errors.New("dataset not found")
	// ErrCorrupt: a dataset's files disagree with meta.json or with the format.
	ErrCorrupt = errors.New("dataset corrupt")
	// ErrExists: a dataset of that name exists and overwriting was not asked for.
	ErrExists = errors.New("dataset already exists")
	// ErrBadName: a dataset name that cannot be used as a directory name.
	ErrBadName = errors.New("invalid dataset name")
	// ErrBadInput: an importer's input files are malformed.
	ErrBadInput = errors.New("invalid input")
	// ErrConfig: a generator configuration is out of range.
	ErrConfig = errors.New("invalid configuration")
)

// Dtypes records the element type of each binary file.
type Dtypes struct {
	Indptr   string `json:"indptr"`
	Indices  string `json:"indices"`
	Features string `json:"features"`
	Labels   string `json:"labels"`
	Splits   string `json:"splits"`
}

// StandardDtypes are the only dtypes of format version 1.
var StandardDtypes = Dtypes{
	Indptr: DtypeInt64, Indices: DtypeInt64, Features: DtypeFloat32,
	Labels: DtypeInt32, Splits: DtypeInt64,
}

// Source records how a dataset was made: by the generator (Kind "generator",
// with its full configuration) or by an importer (Kind "linqs", "npy", "ogb",
// with the input path and what the importer had to drop or add).
type Source struct {
	Kind      string     `json:"kind"`
	Generator *GenConfig `json:"generator,omitempty"`
	Preset    string     `json:"preset,omitempty"`
	Path      string     `json:"path,omitempty"`
	// Inputs names the input files read by an importer.
	Inputs []string `json:"inputs,omitempty"`
	// SkippedEdges counts input edges naming unknown nodes (dropped).
	SkippedEdges int64 `json:"skipped_edges,omitempty"`
	// DuplicateEdges counts input edges dropped as duplicates.
	DuplicateEdges int64 `json:"duplicate_edges,omitempty"`
	// SelfLoops counts input self-loops dropped.
	SelfLoops int64 `json:"self_loops_dropped,omitempty"`
	// Split says where the train/val/test split came from.
	Split string `json:"split,omitempty"`
	// Notes are free-form remarks an importer wants a reader to see.
	Notes []string `json:"notes,omitempty"`
}

// Meta is the content of meta.json.
type Meta struct {
	Format     int    `json:"format"`
	Name       string `json:"name"`
	Nodes      int64  `json:"nodes"`
	Edges      int64  `json:"edges"`
	FeatureDim int    `json:"feature_dim"`
	Classes    int    `json:"classes"`
	// ClassNames, when known, maps label values to names.
	ClassNames []string `json:"class_names,omitempty"`
	Dtypes     Dtypes   `json:"dtypes"`
	// Files maps each file name to its size in bytes; Open checks them.
	Files map[string]int64 `json:"files"`
	// Labeled counts nodes whose label is not -1.
	Labeled int64 `json:"labeled"`
	Train   int64 `json:"train"`
	Val     int64 `json:"val"`
	Test    int64 `json:"test"`
	// Undirected: the source graph was undirected and every edge is stored
	// in both directions (u in in(v) iff v in in(u)).
	Undirected bool `json:"undirected"`
	// SortedNeighbors: each node's in-neighbour list is ascending and has no duplicates.
	SortedNeighbors bool `json:"sorted_neighbors"`
	// EdgeHomophily is the share of edges whose two endpoints have the same
	// class (generator: planted classes of all edges; importers: among
	// edges with both endpoints labeled). Nil when unknown.
	EdgeHomophily *float64  `json:"edge_homophily,omitempty"`
	Source        Source    `json:"source"`
	Created       time.Time `json:"created"`
}

// Bounds check enforces on meta.json's counts: 2^40 nodes, 2^56 edges,
// 2^20 feature dimensions, so that (Nodes+1)·8, Edges·8 and
// Nodes·FeatureDim·4 fit in an int64.
const (
	maxMetaNodes = 1 << 40
	maxMetaEdges = 1 << 56
	maxMetaDim   = 1 << 20
)

// RowBytes is the size of one feature row in bytes.
func (m *Meta) RowBytes() int64 { return int64(m.FeatureDim) * 4 }

// FeatureBytes is the size of features.bin in bytes.
func (m *Meta) FeatureBytes() int64 { return m.Nodes * m.RowBytes() }

// expectedSizes returns the size every file must have given the counts.
func (m *Meta) expectedSizes() map[string]int64 {
	return map[string]int64{
		IndptrFile:   (m.Nodes + 1) * 8,
		IndicesFile:  m.Edges * 8,
		FeaturesFile: m.FeatureBytes(),
		LabelsFile:   m.Nodes * 4,
		TrainFile:    m.Train * 8,
		ValFile:      m.Val * 8,
		TestFile:     m.Test * 8,
	}
}

// DataFiles lists the binary files of a dataset in a fixed order.
var DataFiles = []string{IndptrFile, IndicesFile, FeaturesFile, LabelsFile, TrainFile, ValFile, TestFile}

// check validates meta.json's own fields (not the files).
func (m *Meta) check() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrCorrupt, MetaFile, fmt.Sprintf(format, a...))
	}
	if m.Format != FormatVersion {
		return bad("format version %d, this build reads %d", m.Format, FormatVersion)
	}
	if m.Nodes < 0 || m.Edges < 0 || m.FeatureDim < 0 || m.Classes < 0 {
		return bad("negative count (nodes %d, edges %d, feature_dim %d, classes %d)", m.Nodes, m.Edges, m.FeatureDim, m.Classes)
	}
	if m.Classes > 1<<31-1 {
		return bad("classes %d exceeds int32 labels", m.Classes)
	}
	// Bounds that keep every size computed below inside int64 (a crafted
	// meta.json must not wrap a size check and then allocate without bound).
	if m.Nodes > maxMetaNodes || m.Edges > maxMetaEdges || m.FeatureDim > maxMetaDim {
		return bad("counts beyond this build's bounds (nodes %d of at most %d, edges %d of at most %d, feature_dim %d of at most %d)",
			m.Nodes, int64(maxMetaNodes), m.Edges, int64(maxMetaEdges), m.FeatureDim, maxMetaDim)
	}
	if m.Train < 0 || m.Val < 0 || m.Test < 0 {
		return bad("negative split size")
	}
	if m.Train > m.Nodes || m.Val > m.Nodes || m.Test > m.Nodes || m.Labeled < 0 || m.Labeled > m.Nodes {
		return bad("split sizes %d/%d/%d or labeled %d exceed the %d nodes", m.Train, m.Val, m.Test, m.Labeled, m.Nodes)
	}
	if m.Dtypes != StandardDtypes {
		return bad("dtypes %+v, format %d requires %+v", m.Dtypes, FormatVersion, StandardDtypes)
	}
	if m.ClassNames != nil && len(m.ClassNames) != m.Classes {
		return bad("%d class names for %d classes", len(m.ClassNames), m.Classes)
	}
	want := m.expectedSizes()
	for _, f := range DataFiles {
		got, ok := m.Files[f]
		if !ok {
			return bad("no size recorded for %s", f)
		}
		if got != want[f] {
			return bad("recorded size of %s is %d bytes, counts imply %d", f, got, want[f])
		}
	}
	return nil
}

// ReadMeta reads and checks dir/meta.json without touching the other files.
func ReadMeta(dir string) (Meta, error) {
	var m Meta
	p := filepath.Join(dir, MetaFile)
	b, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return m, fmt.Errorf("%w: %s: %v", ErrNotFound, dir, err)
		}
		return m, fmt.Errorf("read %s: %w", p, err)
	}
	m, err = parseMeta(b)
	if err != nil {
		return m, fmt.Errorf("%s: %w", dir, err)
	}
	return m, nil
}

// parseMeta decodes and checks the content of a meta.json.
func parseMeta(b []byte) (Meta, error) {
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%w: %s: %v", ErrCorrupt, MetaFile, err)
	}
	return m, m.check()
}

// writeMeta writes m as indented JSON to dir/meta.json and syncs it.
func writeMeta(dir string, m *Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode meta: %w", err)
	}
	b = append(b, '\n')
	p := filepath.Join(dir, MetaFile)
	f, err := os.Create(p)
	if err != nil {
		return fmt.Errorf("create %s: %w", p, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", p, err)
	}
	return f.Close()
}
