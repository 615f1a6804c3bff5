package main

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// designCite finds citations of the design document: "DESIGN §6",
// "DESIGN §2, §5", "DESIGN §5's".
var designCite = regexp.MustCompile(`DESIGN (§\d+(?:(?:, | and )§\d+)*)`)

// TestDesignCitations: every "DESIGN §n" in the repository's code and
// documents names a section "## n. ..." of docs/DESIGN.md.
func TestDesignCitations(t *testing.T) {
	sections := map[string]bool{}
	f, err := os.Open("docs/DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	heading := regexp.MustCompile(`^## (\d+)\. `)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := heading.FindStringSubmatch(sc.Text()); m != nil {
			sections[m[1]] = true
		}
	}
	f.Close()
	if len(sections) < 5 {
		t.Fatalf("docs/DESIGN.md has %d numbered sections", len(sections))
	}
	cites := 0
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "third_party", "bin", "node_modules", "vendor":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".templ", ".md", ".sql", ".sh", ".js", ".css":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range designCite.FindAllStringSubmatch(line, -1) {
				for _, n := range regexp.MustCompile(`§(\d+)`).FindAllStringSubmatch(m[1], -1) {
					cites++
					if !sections[n[1]] {
						t.Errorf("%s:%d cites DESIGN §%s, which docs/DESIGN.md does not have", path, i+1, n[1])
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cites < 10 {
		t.Errorf("found only %d citations of DESIGN: is the pattern right?", cites)
	}
}
