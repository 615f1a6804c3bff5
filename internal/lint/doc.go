// Package lint holds the import rules of outcore's architecture
// (docs/ARCHITECTURE.md, "Import rules") as tests over `go list`:
//
//   - the engine (outcore/engine/...) imports neither the experiment
//     runner, the store, the dashboard nor the CLI — tests included;
//   - a package named report never imports the dashboard (outcore/web);
//   - report and web (non-test) depend on no supervisor, cgroup manager,
//     Slurm executor, the runner itself or the engine's runtime: they
//     read the grid language from experiments/grid and the run vocabulary
//     from engine/vocab (viewers.go);
//   - those two leaves link no cgo and no runtime and build for darwin
//     without cgo (leaves.go);
//   - a variant package takes its memory plan through kit (no Go or
//     memory limit set by hand, no hand-written held-outside deviation)
//     and keeps its Prepare within 80 lines (memplan.go);
//   - unsafe, syscall and golang.org/x/sys/unix only in the packages
//     that need them, everything else going through internal/osutil
//     (rules.go);
//   - variant packages (engine/system/<variant>) never import each other;
//   - the engine's parts (graph, dataset, storage, sample, nn, cache,
//     metrics) never import engine/train or engine/system.
//   - the dataset's file names and the way from a dataset to its data
//     directory are spelt only in engine/dataset and engine/train
//     (literals_test.go);
//   - the Slurm executor's words (Slurm, its tools, partitions, job
//     scripts) appear in non-test Go code only in experiments/slurm, and
//     its package is imported only by the queue's wiring line
//     (executor_words.go).
package lint

import "strings"

// Package is what the rules read of one `go list -json` entry.
type Package struct {
	ImportPath string
	Name       string
	Imports    []string
	Deps       []string
}

// engineForbidden are the packages (and their sub-packages) the engine
// must not depend on.
var engineForbidden = []string{"outcore/experiments", "outcore/store", "outcore/web", "outcore/cmd/outcore/cli"}

// under reports whether path is pkg or below it.
func under(path, pkg string) bool {
	return path == pkg || strings.HasPrefix(path, pkg+"/")
}

// basePath strips the test-variant suffix go list adds
// ("outcore/engine/x [outcore/engine/x.test]") and the _test package
// suffix, so that a test of an engine package counts as the engine.
func basePath(p string) string {
	if i := strings.IndexByte(p, ' '); i >= 0 {
		p = p[:i]
	}
	return strings.TrimSuffix(strings.TrimSuffix(p, ".test"), "_test")
}

// Violations lists every break of the rules among pkgs, one line each
// ("outcore/engine/x imports outcore/store").
func Violations(pkgs []Package) []string {
	var out []string
	for _, p := range pkgs {
		path := basePath(p.ImportPath)
		if under(path, "outcore/engine") {
			for _, imp := range p.Imports {
				for _, f := range engineForbidden {
					if under(basePath(imp), f) {
						out = append(out, path+" imports "+basePath(imp)+" (the engine must not know the runner, store, dashboard or CLI)")
					}
				}
			}
		}
		if p.Name == "report" {
			for _, d := range append(append([]string(nil), p.Imports...), p.Deps...) {
				if under(basePath(d), "outcore/web") {
					out = append(out, path+" depends on "+basePath(d)+" (a report package must not import the dashboard)")
					break
				}
			}
		}
	}
	return out
}
