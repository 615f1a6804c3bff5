package train

// Where a variant's files are: the run's data directory, a scratch
// directory of its own in it, and the feature table opened with the
// backend its paper uses (docs/ARCHITECTURE.md "Adding a system").

import (
	"fmt"
	"os"
	"path/filepath"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/engine/storage"
)

// DataDir is the data directory holding the run's dataset
// (<data>/datasets/<name>).
func (e *Env) DataDir() string { return filepath.Dir(filepath.Dir(e.Dataset.Dir)) }

// FeaturesPath and IndicesPath are the run's feature table and indices,
// for a variant that reads them with its own I/O (a memory map, a
// partitioning pass) rather than through OpenFeatures or OpenIndices.
func (e *Env) FeaturesPath() string { return e.Dataset.Path(dataset.FeaturesFile) }

// IndicesPath: see FeaturesPath.
func (e *Env) IndicesPath() string { return e.Dataset.Path(dataset.IndicesFile) }

// ScratchDir creates a directory of the run's own in the data directory,
// <data>/<system>-run-<pid>-<random>, for the files a variant writes while
// it runs (runtime files, partitions, packed chunks). The variant removes
// it in Close; a supervisor removes what a killed child left
// (experiments/supervise.RemoveScratch matches the name).
func (e *Env) ScratchDir() (string, error) {
	dir, err := os.MkdirTemp(e.DataDir(), fmt.Sprintf("%s-run-%d-", e.Config.System, os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("%s: scratch directory: %w", e.Config.System, err)
	}
	return dir, nil
}

// OpenFeaturesWith opens the feature table for row reads as OpenFeatures
// does, with the backend the variant's paper uses (prefer) where the run
// leaves the choice to it (--io auto); a run that chose another backend
// reads through it, recorded as a deviation. tweak, when not nil, sets the
// variant's other storage options (block size, queue depth, merging)
// before the file is opened.
func (e *Env) OpenFeaturesWith(prefer storage.Backend, tweak func(*storage.Options)) (*storage.File, error) {
	return e.openWith(dataset.FeaturesFile, "features", "feature rows", e.Dataset.RowBytes(), metrics.FileFeatures, prefer, tweak)
}

// OpenIndicesWith opens indices.bin as OpenIndices does (8-byte rows),
// with the backend the variant's paper uses as OpenFeaturesWith chooses
// it.
func (e *Env) OpenIndicesWith(prefer storage.Backend, tweak func(*storage.Options)) (*storage.File, error) {
	return e.openWith(dataset.IndicesFile, "indices", "index entries", 8, metrics.FileTopology, prefer, tweak)
}

// openWith opens the dataset file name (what: its name in errors, rows:
// its rows in deviations) with the run's storage options, prefer's backend
// under --io auto and tweak's changes.
func (e *Env) openWith(name, what, rows string, rowBytes int64, kind string, prefer storage.Backend, tweak func(*storage.Options)) (*storage.File, error) {
	o := e.Storage
	o.RowBytes = rowBytes
	o.Kind = kind
	if o.Backend == storage.BackendAuto {
		o.Backend = prefer
	}
	if o.Backend != prefer {
		e.Deviate("%s are read through the %s backend instead of %s (--io)", rows, o.Backend, prefer)
	}
	if tweak != nil {
		tweak(&o)
	}
	f, err := storage.OpenFile(e.Dataset.Path(name), o)
	if err != nil {
		return nil, fmt.Errorf("%s: open %s: %w", e.Config.System, what, err)
	}
	return f, nil
}
