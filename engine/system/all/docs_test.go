package all

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"outcore/engine/train"
)

// TestDocsListEveryVariant: the variants table of docs/ARCHITECTURE.md
// names exactly the registered variants.
func TestDocsListEveryVariant(t *testing.T) {
	b, err := os.ReadFile("../../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, "<!-- variants:begin -->"), strings.Index(doc, "<!-- variants:end -->")
	if i < 0 || j < i {
		t.Fatal("docs/ARCHITECTURE.md has no variants table between <!-- variants:begin --> and <!-- variants:end -->")
	}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
	listed := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(doc[i:j], -1) {
		listed[m[1]] = true
		if _, ok := train.LookupVariant(m[1]); !ok {
			t.Errorf("docs/ARCHITECTURE.md lists %q, which is not registered", m[1])
		}
	}
	for _, v := range train.Variants() {
		if !listed[v.Name] && !testOnly[v.Name] {
			t.Errorf("variant %q is registered but missing from the variants table of docs/ARCHITECTURE.md", v.Name)
		}
	}
}
