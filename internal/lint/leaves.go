package lint

// The leaves the dashboard side reads runs through (docs/ARCHITECTURE.md,
// "Import rules"): the run vocabulary (engine/vocab) and the grid language
// (experiments/grid) link no cgo and no part of the runtime — no run loop,
// storage, sampler, model, GPU binding, io_uring, store or SQLite — so that
// a viewer of grids builds anywhere (GOOS=darwin, CGO_ENABLED=0) and a
// change to the engine does not ripple into the grid.

import "strings"

// Leaves are the packages LeafViolations holds to the rule.
var Leaves = []string{"outcore/engine/vocab", "outcore/experiments/grid"}

// leafAllowed are the module's packages a leaf may depend on: the other
// leaves, the units, the dataset's description (engine/dataset and the
// OS helpers it reads files with), the accelerator profiles and the
// testbeds (engine/testbed, the standard library and the units: the
// configuration's testbed is checked against its names) and the
// external systems' registry.
var leafAllowed = []string{
	"outcore/engine/vocab", "outcore/experiments/grid", "outcore/internal/units",
	"outcore/engine/dataset", "outcore/internal/osutil", "outcore/engine/accel",
	"outcore/engine/testbed",
	// the external systems' registry (the grid checks an "external:NAME"
	// entry against it) and the record types its protocol parser returns
	"outcore/experiments/external", "outcore/engine/metrics",
}

// cgoPackages are the dependencies known to bring cgo (any package with
// cgo files is refused as well, LeafPackage.CgoFiles).
var cgoPackages = []string{"runtime/cgo", "github.com/mattn/go-sqlite3", "gonum.org"}

// LeafPackage is what LeafViolations reads of one `go list -deps -json`
// entry.
type LeafPackage struct {
	ImportPath string
	CgoFiles   []string
	Deps       []string
}

// LeafViolations lists, for each leaf among pkgs (go list -deps of the
// leaves, without tests), every dependency that breaks the rule above and
// every dependency with cgo files, one line each.
func LeafViolations(pkgs []LeafPackage) []string {
	cgo := map[string]bool{}
	for _, p := range pkgs {
		if len(p.CgoFiles) > 0 {
			cgo[p.ImportPath] = true
		}
	}
	var out []string
	for _, p := range pkgs {
		if !isLeaf(p.ImportPath) {
			continue
		}
		for _, d := range p.Deps {
			switch {
			case cgo[d] || knownCgo(d):
				out = append(out, p.ImportPath+" links "+d+", which uses cgo")
			case strings.HasPrefix(d, "outcore") && !allowedInLeaf(d):
				out = append(out, p.ImportPath+" links "+d+" (a leaf of the dashboard side links no runtime: only "+strings.Join(leafAllowed, ", ")+")")
			}
		}
	}
	return out
}

func isLeaf(path string) bool {
	for _, l := range Leaves {
		if path == l {
			return true
		}
	}
	return false
}

func allowedInLeaf(path string) bool {
	for _, a := range leafAllowed {
		if path == a {
			return true
		}
	}
	return false
}

func knownCgo(path string) bool {
	for _, c := range cgoPackages {
		if under(path, c) {
			return true
		}
	}
	return false
}
