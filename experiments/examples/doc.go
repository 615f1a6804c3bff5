// Package examples holds ready-to-start grid files of the papers'
// micro-experiments, embedded in the binary. `outcore serve` writes each
// into the data directory's examples/ folder when it is not there yet
// (web.WriteExample), where the experiment list offers it with a Start
// button. Every file is a grid (grid.ParseGrid) over the dashboard's
// default dataset ("default", preset small) — except variants-medium.json,
// the grid of docs/benchmarks/variants.md on the `medium` preset (make it
// with `outcore data gen --preset medium --name medium`); one file per setting a figure
// compares, since a grid varies no variant option (its axes are system,
// mem_limit, feature_dim, batch_size, model, fanout and repeat). The
// figures each file reproduces the shape of are named in its "name" and
// in docs/benchmarks/variants.md.
package examples

import (
	"embed"
	"io/fs"
	"sort"
)

//go:embed *.json
var files embed.FS

// Names lists the embedded grid files, sorted.
func Names() []string {
	des, _ := fs.ReadDir(files, ".")
	var out []string
	for _, de := range des {
		out = append(out, de.Name())
	}
	sort.Strings(out)
	return out
}

// File returns the contents of the embedded grid file name.
func File(name string) ([]byte, error) { return files.ReadFile(name) }
