package lint

// The rules on what the engine's layers and the variants import
// (docs/ARCHITECTURE.md, "Import rules"), besides Violations' engine and
// report rules: low-level imports only where they are needed, variant
// packages apart from one another, and the engine's parts below the run
// loop and the variants.

import (
	"slices"
	"strings"
)

// restricted lists, for each low-level import, the packages (their
// sub-packages and tests; the module's root package alone) allowed to use
// it; anything else goes through internal/osutil
// (memory maps, byte views, fadvise, statfs, flock, /proc).
var restricted = map[string][]string{
	"unsafe": {
		"outcore/internal/osutil",      // byte views, memory maps
		"outcore/engine/storage",       // io_uring submission entries and buffers
		"outcore/engine/nn",            // cgo OpenBLAS; 8-byte views of a sparse input row
		"outcore/engine/cuda",          // cgo dlopen of CUDA; host buffers of device copies
		"outcore/engine/system/kit",    // cgo gather of rows from a memory map
		"outcore/third_party/giouring", // the io_uring bindings
	},
	"syscall": {
		"outcore/cmd/outcore",           // signals of the process
		"outcore/internal/osutil",       // OS helpers
		"outcore/internal/cgroup",       // placing a child in a group
		"outcore/experiments/supervise", // the child's process group and signals
		"outcore/cmd/outcore/cli",       // re-running itself in a memory group
		"outcore/engine/storage",        // errno of refused O_DIRECT opens
		"outcore/engine/dataset",        // test: per-thread CPU time
		"outcore/engine/nn",             // benchmark: CPU time
		"outcore/experiments",           // runner processes and their signals
		"outcore/store",                 // errno of a full or read-only disk
		"outcore/web",                   // tests: descriptor limits
		"outcore/third_party/giouring",
	},
	"golang.org/x/sys/unix": {
		"outcore/internal/osutil",
		"outcore/internal/cgroup",
		"outcore/engine/storage",
		"outcore/engine/metrics", // test: reads through its own memory map
		"outcore/experiments",    // tests: signals to runner processes
		"outcore/store",          // access and stat of the database; tests mount a full tmpfs
		"outcore/third_party/giouring",
	},
}

// engineParts are the engine's building blocks below the run loop
// (engine/train) and the variants (engine/system): they never import
// either.
var engineParts = []string{
	"outcore/engine/graph", "outcore/engine/dataset", "outcore/engine/storage", "outcore/engine/sample",
	"outcore/engine/nn", "outcore/engine/cache", "outcore/engine/metrics", "outcore/engine/cuda",
}

// variantOf is the variant package path at or above path
// ("outcore/engine/system/ginex"), "" for anything else (kit, all and
// systest are shared, not variants).
func variantOf(path string) string {
	rest, ok := strings.CutPrefix(path, "outcore/engine/system/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	switch name {
	case "kit", "all", "systest":
		return ""
	}
	return "outcore/engine/system/" + name
}

// LayerViolations lists every break of the rules above among pkgs (go
// list with tests), one line each.
func LayerViolations(pkgs []Package) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, p := range pkgs {
		path := basePath(p.ImportPath)
		for _, raw := range p.Imports {
			imp := basePath(raw)
			if allowed, ok := restricted[imp]; ok && !slices.ContainsFunc(allowed, func(a string) bool { return path == a || a != "outcore" && under(path, a) }) {
				add(path + " imports " + imp + " (only " + strings.Join(allowed, ", ") + " may; use internal/osutil)")
			}
			if v := variantOf(path); v != "" {
				if w := variantOf(imp); w != "" && w != v {
					add(path + " imports " + w + " (variant packages never import each other; share through engine/system/kit)")
				}
			}
			for _, part := range engineParts {
				if under(path, part) && (under(imp, "outcore/engine/train") || under(imp, "outcore/engine/system")) {
					add(path + " imports " + imp + " (the engine's parts never import the run loop or the variants)")
				}
			}
		}
	}
	return out
}
