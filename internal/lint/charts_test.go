package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// chartTableFile is the one home of the chart ids (docs/ARCHITECTURE.md,
// "Adding a chart").
const chartTableFile = "report/chart_table.go"

// tableEntry is what the lint reads of a chart table entry.
type tableEntry struct {
	scope string // the Scope field's identifier
	build bool   // whether it names a builder
}

// tableIDs reads the chart table's entries: each composite literal with an
// ID field, its id, scope and whether it names a builder (Build).
func tableIDs(t *testing.T, root string) map[string]tableEntry {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, chartTableFile), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]tableEntry{}
	ast.Inspect(f, func(n ast.Node) bool {
		cl, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		id, e := "", tableEntry{}
		for _, el := range cl.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			switch key, _ := kv.Key.(*ast.Ident); {
			case key == nil:
			case key.Name == "ID":
				if lit, ok := kv.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					id, _ = strconv.Unquote(lit.Value)
				}
			case key.Name == "Build":
				e.build = true
			case key.Name == "Scope":
				if v, ok := kv.Value.(*ast.Ident); ok {
					e.scope = v.Name
				}
			}
		}
		if id != "" {
			if _, dup := ids[id]; dup {
				t.Errorf("%s: chart id %q twice", chartTableFile, id)
			}
			ids[id] = e
		}
		return true
	})
	return ids
}

// chartIDExceptions are string literals that equal a chart id and are not
// one: the stack group of the stage-time bars, the keys of other things.
var chartIDExceptions = map[string]map[string]bool{
	"report/wall_stages.go": {"stages": true}, // Series.Stack, the stacked group's name
	"report/stages.go":      {"stages": true}, // Series.Stack
}

// chartPackages name charts throughout; elsewhere the catalogue's common
// words ("memory", "stages") are other things, and only ids with a hyphen
// are looked for.
var chartPackages = []string{"report/", "web/", "cmd/outcore/cli/"}

// TestOneHomeForChartIDs: every chart the product draws is an entry of
// report/chart_table.go, each with a scope and a builder; no other code
// spells a chart id as a string literal (it takes the table's lists or
// entries), and no test copies a catalogue by hand: a test may name the
// charts it looks at, but a list naming half or more of a scope's charts
// is a second catalogue (take ChartIDs, RunChartIDs or ChartTable).
func TestOneHomeForChartIDs(t *testing.T) {
	root := "../.."
	ids := tableIDs(t, root)
	if len(ids) < 26 {
		t.Fatalf("%s: %d chart ids, want every chart (26 or more)", chartTableFile, len(ids))
	}
	perScope := map[string]int{}
	for id, e := range ids {
		if !e.build {
			t.Errorf("%s: chart %q has no builder (Build)", chartTableFile, id)
		}
		if e.scope == "" {
			t.Errorf("%s: chart %q has no scope", chartTableFile, id)
		}
		perScope[e.scope]++
	}
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "third_party" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || rel == chartTableFile || strings.HasSuffix(p, "_templ.go") {
			return nil
		}
		inCharts := false
		for _, pkg := range chartPackages {
			inCharts = inCharts || strings.HasPrefix(rel, pkg)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		n++
		isID := func(lit *ast.BasicLit) (string, bool) {
			if lit.Kind != token.STRING {
				return "", false
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !(inCharts || strings.Contains(s, "-")) {
				return "", false
			}
			_, ok := ids[s]
			return s, ok && !chartIDExceptions[rel][s]
		}
		test := strings.HasSuffix(p, "_test.go")
		tags := map[*ast.BasicLit]bool{} // struct tags are not chart ids
		ast.Inspect(f, func(n ast.Node) bool {
			if fd, ok := n.(*ast.Field); ok && fd.Tag != nil {
				tags[fd.Tag] = true
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if !test {
					return true
				}
				var listed []string
				listedIn := map[string]int{}
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						el = kv.Key
					}
					if lit, ok := el.(*ast.BasicLit); ok {
						if id, ok := isID(lit); ok {
							listed = append(listed, id)
							listedIn[ids[id].scope]++
						}
					}
				}
				copies := false
				for scope, k := range listedIn {
					copies = copies || k > 1 && 2*k >= perScope[scope]
				}
				if copies {
					t.Errorf("%s: lists charts %v by hand: take them from report's table (ChartIDs, RunChartIDs, ChartTable)", fset.Position(n.Pos()), listed)
				}
			case *ast.BasicLit:
				if test || tags[n] {
					return true
				}
				if id, ok := isID(n); ok {
					t.Errorf("%s: spells chart id %q: take it from report's chart table (%s)", fset.Position(n.Pos()), id, chartTableFile)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("read only %d Go files", n)
	}
}

// TestAddingAChartDoc: docs/ARCHITECTURE.md's "Adding a chart" names the
// chart table as the place to change, and every test it cites exists.
func TestAddingAChartDoc(t *testing.T) {
	root := "../.."
	b, err := os.ReadFile(filepath.Join(root, "docs/ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "\n## Adding a chart\n")
	if i < 0 {
		t.Fatal(`docs/ARCHITECTURE.md has no "## Adding a chart"`)
	}
	sec := doc[i+1:]
	if j := strings.Index(sec[3:], "\n## "); j >= 0 {
		sec = sec[:j+3]
	}
	if !strings.Contains(sec, "`"+chartTableFile+"`") {
		t.Errorf(`"Adding a chart" does not name %s`, chartTableFile)
	}
	cited := regexp.MustCompile("`(Test[A-Za-z0-9_]+)`").FindAllStringSubmatch(sec, -1)
	if len(cited) == 0 {
		t.Fatal(`"Adding a chart" cites no test`)
	}
	var tests strings.Builder
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			tests.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cited {
		if !strings.Contains(tests.String(), "func "+c[1]+"(") {
			t.Errorf(`"Adding a chart" cites %s, which no test file defines`, c[1])
		}
	}
}
