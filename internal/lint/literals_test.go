package lint

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneHomeForDatasetPaths: the dataset's file names and the way from a
// dataset to its data directory live in engine/dataset and engine/train
// (dataset.FeaturesFile, train.Env.DataDir, ScratchDir,
// OpenFeaturesWith); no other package's code spells them again (tests
// that write fixture files may).
func TestOneHomeForDatasetPaths(t *testing.T) {
	forbidden := []string{`"features.bin"`, `"indices.bin"`, `"indptr.bin"`, "dataDirOf"}
	home := []string{"engine/dataset/", "engine/train/"}
	root := "../.."
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "third_party" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		for _, h := range home {
			if strings.HasPrefix(filepath.ToSlash(rel), h) {
				return nil
			}
		}
		n++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, f := range forbidden {
			if strings.Contains(string(b), f) {
				t.Errorf("%s spells %s: use engine/dataset's names or train.Env's DataDir, ScratchDir, OpenFeaturesWith", rel, f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("read only %d Go files", n)
	}
}
