package lint

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLeavesLinkNoRuntime: engine/vocab and experiments/grid depend on
// nothing of the runtime and nothing with cgo (go list -deps), and build
// for another system without cgo (GOOS=darwin CGO_ENABLED=0 go build).
func TestLeavesLinkNoRuntime(t *testing.T) {
	args := append([]string{"list", "-deps", "-json"}, Leaves...)
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var pkgs []LeafPackage
	seen := 0
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p LeafPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if isLeaf(p.ImportPath) {
			seen++
		}
		pkgs = append(pkgs, p)
	}
	if seen != len(Leaves) {
		t.Fatalf("go list listed %d of the %d leaves", seen, len(Leaves))
	}
	for _, v := range LeafViolations(pkgs) {
		t.Error(v)
	}

	build := exec.Command("go", append([]string{"build", "-o", os.DevNull}, Leaves...)...)
	build.Dir = "../.."
	build.Env = append(os.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Errorf("GOOS=darwin CGO_ENABLED=0 go build %s: %v\n%s", strings.Join(Leaves, " "), err, out)
	}
}

// TestLeafViolations checks the rule itself on made-up packages.
func TestLeafViolations(t *testing.T) {
	pkgs := []LeafPackage{
		{ImportPath: "outcore/experiments/grid", Deps: []string{"outcore/engine/vocab", "outcore/internal/units", "fmt", "outcore/engine/train", "outcore/store"}},
		{ImportPath: "outcore/engine/vocab", Deps: []string{"outcore/engine/accel", "example.com/withcgo", "github.com/mattn/go-sqlite3"}},
		{ImportPath: "example.com/withcgo", CgoFiles: []string{"a.go"}},
		{ImportPath: "outcore/web", Deps: []string{"outcore/engine/train"}}, // not a leaf
	}
	got := strings.Join(LeafViolations(pkgs), "\n")
	for _, want := range []string{"grid links outcore/engine/train", "grid links outcore/store", "vocab links example.com/withcgo, which uses cgo", "vocab links github.com/mattn/go-sqlite3, which uses cgo"} {
		if !strings.Contains(got, want) {
			t.Errorf("violations %q lack %q", got, want)
		}
	}
	for _, not := range []string{"outcore/web", "engine/accel", "internal/units"} {
		if strings.Contains(got, "links "+not) || strings.Contains(got, not+" links") {
			t.Errorf("violations %q name %s", got, not)
		}
	}
}
