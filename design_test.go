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

// TestGoLineIsThePatchedRelease: go.mod's `go` line is at least the Go
// release docs/SECURITY.md names as the patched one, so that a build under
// GOTOOLCHAIN=local with an older, vulnerable Go refuses instead of making
// a binary with the standard library's known vulnerabilities.
func TestGoLineIsThePatchedRelease(t *testing.T) {
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	sec, err := os.ReadFile("docs/SECURITY.md")
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)\.(\d+)$`).FindStringSubmatch(string(mod))
	if goLine == nil {
		t.Fatal("go.mod has no `go X.Y.Z` line naming a patch release")
	}
	named := regexp.MustCompile("patched release \\(`go (\\d+)\\.(\\d+)\\.(\\d+)`\\)").FindStringSubmatch(string(sec))
	if named == nil {
		t.Fatal("docs/SECURITY.md names no patched release (\"patched release (`go X.Y.Z`)\")")
	}
	num := func(m []string) [3]int {
		var v [3]int
		for i := range v {
			for _, c := range m[i+1] {
				v[i] = v[i]*10 + int(c-'0')
			}
		}
		return v
	}
	have, want := num(goLine), num(named)
	for i := range have {
		if have[i] != want[i] {
			if have[i] < want[i] {
				t.Fatalf("go.mod says go %s.%s.%s, older than the patched release %s.%s.%s docs/SECURITY.md names", goLine[1], goLine[2], goLine[3], named[1], named[2], named[3])
			}
			break
		}
	}
	if regexp.MustCompile(`(?m)^toolchain `).Match(mod) && !strings.Contains(string(mod), "toolchain go"+goLine[1]+"."+goLine[2]) {
		t.Fatal("go.mod's toolchain line names another release series than its go line")
	}
}
