package lint

import (
	"fmt"
	"slices"
	"strings"
)

// Floors are the top-level folders of the module from the ground up
// (docs/ARCHITECTURE.md, "Floors"): a package imports only packages on
// its own floor or below. internal/ holds the leaves (OS helpers, units,
// cgroups, the version), engine/ the training engine, store/ and
// migrations/ the database, gpu/ NVML, experiments/ the grids and the
// runner, report/ the views without HTTP, static/ and web/ the dashboard,
// cmd/ the command line that wires them.
var Floors = [][]string{
	{"third_party", "internal"},
	{"engine"},
	{"migrations", "store"},
	{"gpu"},
	{"experiments"},
	{"report"},
	{"static", "web"},
	{"cmd"},
}

// UpwardAllowed lists the imports that may point up a floor, each with
// its reason: at most one (docs/ARCHITECTURE.md). Keys are
// "importer -> imported" package paths.
var UpwardAllowed = map[string]string{}

// topFolder is the first element of a module package path below
// "outcore" ("outcore/engine/dataset" → "engine"), "" for the module root
// and for packages outside the module.
func topFolder(path string) string {
	path = basePath(path)
	rest, ok := strings.CutPrefix(path, "outcore/")
	if !ok {
		return ""
	}
	top, _, _ := strings.Cut(rest, "/")
	return top
}

// floorOf is the index in Floors of a top-level folder, -1 if it has none.
func floorOf(top string) int {
	for i, f := range Floors {
		if slices.Contains(f, top) {
			return i
		}
	}
	return -1
}

// FloorViolations lists every import among pkgs that points to a higher
// floor than its importer's and is not in UpwardAllowed, and every
// module folder that has no floor.
func FloorViolations(pkgs []Package) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range pkgs {
		from := basePath(p.ImportPath)
		top := topFolder(from)
		if top == "" {
			continue
		}
		ff := floorOf(top)
		if ff < 0 {
			if !seen[top] {
				out = append(out, fmt.Sprintf("%s: top-level folder %q has no floor in lint.Floors", from, top))
				seen[top] = true
			}
			continue
		}
		for _, imp := range p.Imports {
			to := basePath(imp)
			tt := topFolder(to)
			if tt == "" || tt == top {
				continue
			}
			tf := floorOf(tt)
			if tf < 0 {
				if !seen[tt] {
					out = append(out, fmt.Sprintf("%s imports %s: top-level folder %q has no floor in lint.Floors", from, to, tt))
					seen[tt] = true
				}
				continue
			}
			if tf > ff && UpwardAllowed[from+" -> "+to] == "" {
				out = append(out, fmt.Sprintf("%s imports %s: %s/ is above %s/ (docs/ARCHITECTURE.md, Floors)", from, to, tt, top))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// FloorsDiagram is the floors as docs/ARCHITECTURE.md draws them: the top
// floor first, one line each ("floor 7  cmd/").
func FloorsDiagram() string {
	var b strings.Builder
	b.WriteString("```\n")
	for i := len(Floors) - 1; i >= 0; i-- {
		dirs := make([]string, len(Floors[i]))
		for j, d := range Floors[i] {
			dirs[j] = d + "/"
		}
		fmt.Fprintf(&b, "floor %d  %s\n", i, strings.Join(dirs, " "))
	}
	b.WriteString("```")
	return b.String()
}
