package slurm

// A grid's slurm.node_data_dir is confined like a dataset import
// (docs/SECURITY.md): the job, which may run as root on the node, creates
// and writes that folder (`outcore data gen --like`), so a grid may only
// name a folder inside the queue's own node data directory
// (--slurm-node-data-dir), or inside the data directory when the queue
// has none. "/etc/../root" is refused for its "..", and a path is checked
// again after following the symbolic links of the part of it that exists
// here (shared storage), so a link cannot lead out either.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"outcore/experiments/grid"
)

// ErrOutsideNodeDataRoot is wrapped by the error of a node data directory
// outside the folder the queue allows.
var ErrOutsideNodeDataRoot = errors.New("outside the folder node data directories may be in")

// NodeDataRoot is the folder a grid's node data directory must lie in: the
// queue's NodeDataDir, else the data directory.
func (o Options) NodeDataRoot(dataDir string) string {
	if o.NodeDataDir != "" {
		return o.NodeDataDir
	}
	return dataDir
}

// ConfineNodeDataDir returns p, cleaned, when it lies inside root; the
// symbolic links of the longest part of each that exists here are followed
// first. The error names both.
func ConfineNodeDataDir(root, p string) (string, error) {
	if err := NodeDataDirSyntax(p); err != nil {
		return "", err
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	realRoot, err := resolveExisting(absRoot)
	if err != nil {
		return "", err
	}
	clean := filepath.Clean(p)
	real, err := resolveExisting(clean)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		if real != clean {
			return "", fmt.Errorf("%s resolves to %s, %w %s", p, real, ErrOutsideNodeDataRoot, absRoot)
		}
		return "", fmt.Errorf("%s is %w %s", p, ErrOutsideNodeDataRoot, absRoot)
	}
	return clean, nil
}

// resolveExisting follows the symbolic links of the longest prefix of the
// absolute, clean path p that exists, and appends the rest.
func resolveExisting(p string) (string, error) {
	rest := ""
	for cur := p; ; {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s: %w", cur, err)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// checkNodeDataDir is a grid's node data directory checked at creation:
// inside root, and not the data directory itself (the jobs generate their
// datasets into it: the shared data directory itself would have every
// node write over the datasets the server reads).
func checkNodeDataDir(root, p, dataDir string) error {
	var ps grid.ProblemList
	if NodeDataDirSyntax(p) != nil {
		return nil // said by the grid's own check
	}
	if dir, err := ConfineNodeDataDir(root, p); err != nil {
		ps.Add("slurm.node_data_dir", "slurm.node_data_dir: %v", err)
	} else if sameDir(dir, dataDir) {
		ps.Add("slurm.node_data_dir", "slurm.node_data_dir: %s is the data directory itself; name a folder inside it (each node generates its datasets there)", p)
	}
	return ps.Err()
}

// sameDir reports whether a and b name the same folder (symbolic links
// followed where they exist).
func sameDir(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	if errA != nil || errB != nil {
		ra, rb = filepath.Clean(a), filepath.Clean(b)
	}
	if aa, err := filepath.Abs(ra); err == nil {
		ra = aa
	}
	if bb, err := filepath.Abs(rb); err == nil {
		rb = bb
	}
	return ra == rb
}
