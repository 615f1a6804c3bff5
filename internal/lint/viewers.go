package lint

// The viewers' rule (docs/ARCHITECTURE.md, "Import rules"): the report
// and the dashboard read the grid language (experiments/grid) and the
// store, never the runner's machinery. Their non-test packages depend on
// no child supervisor, no cgroup manager, no Slurm executor and not on the
// runner itself (outcore/experiments; its leaf experiments/grid is
// allowed), nor on the engine's runtime — the run loop, the variants,
// storage, sampling, the model, the GPU binding, the storage profiles —
// whose vocabulary they read from engine/vocab. The dashboard reaches the
// runner only through its Queue interface, wired by the CLI.

// viewers are the packages (and their sub-packages) the rule holds for.
var viewers = []string{"outcore/report", "outcore/web"}

// runnerOnly are the runner's packages (and their sub-packages) a viewer
// never depends on; runnerRoot is the runner's own package, forbidden
// alone (its sub-package grid is the viewers' grid language).
var (
	runnerOnly = []string{"outcore/experiments/supervise", "outcore/internal/cgroup", "outcore/experiments/slurm",
		"outcore/engine/train", "outcore/engine/system", "outcore/engine/storage", "outcore/engine/sample",
		"outcore/engine/nn", "outcore/engine/cuda", "outcore/engine/graph", "outcore/engine/cache",
		"outcore/engine/devprofile", "outcore/third_party"}
	runnerRoot = "outcore/experiments"
)

// ViewerViolations lists every viewer among pkgs (go list -deps, without
// -test) that depends on the runner's machinery, one line each.
func ViewerViolations(pkgs []Package) []string {
	var out []string
	for _, p := range pkgs {
		path := basePath(p.ImportPath)
		viewer := false
		for _, v := range viewers {
			viewer = viewer || under(path, v)
		}
		if !viewer {
			continue
		}
		for _, raw := range append(append([]string(nil), p.Imports...), p.Deps...) {
			d := basePath(raw)
			bad := d == runnerRoot
			for _, r := range runnerOnly {
				bad = bad || under(d, r)
			}
			if bad {
				out = append(out, path+" depends on "+d+" (the report and the dashboard import the grid (experiments/grid) and the run vocabulary (engine/vocab), never the runner or the engine's runtime)")
				break
			}
		}
	}
	return out
}
