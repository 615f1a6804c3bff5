package testbed

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The package is a leaf (DESIGN §13, docs/ARCHITECTURE.md): its non-test
// files import the standard library and internal/units only, so that the
// config, the grid, the web form and the run loop can all use it.
func TestLeaf(t *testing.T) {
	paths, _ := filepath.Glob("*.go")
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if strings.Contains(first, ".") || first == "outcore" && path != "outcore/internal/units" {
				t.Errorf("%s imports %s: engine/testbed imports the standard library and internal/units only", p, path)
			}
		}
	}
}
