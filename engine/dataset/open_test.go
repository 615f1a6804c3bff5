package dataset

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corruptions: each damages one file of a generated tiny dataset and names
// the words Open's error must contain.
var corruptions = []struct {
	name string
	do   func(t *testing.T, d *Dataset)
	want []string
}{
	{"truncated features", func(t *testing.T, d *Dataset) {
		truncate(t, d.Path(FeaturesFile), d.FeatureBytes()-1)
	}, []string{FeaturesFile, "truncated"}},
	{"features too long", func(t *testing.T, d *Dataset) {
		truncate(t, d.Path(FeaturesFile), d.FeatureBytes()+4)
	}, []string{FeaturesFile, "too long"}},
	{"missing labels", func(t *testing.T, d *Dataset) {
		if err := os.Remove(d.Path(LabelsFile)); err != nil {
			t.Fatal(err)
		}
	}, []string{LabelsFile, "missing"}},
	{"non-monotone indptr", func(t *testing.T, d *Dataset) {
		putInt64(t, d.Path(IndptrFile), 100, d.Indptr[102]+1)
	}, []string{IndptrFile, "non-decreasing", "indptr[100]"}},
	{"indptr end", func(t *testing.T, d *Dataset) {
		putInt64(t, d.Path(IndptrFile), d.Meta.Nodes, d.Meta.Edges-1)
	}, []string{IndptrFile, "edge count"}},
	{"index out of range", func(t *testing.T, d *Dataset) {
		putInt64(t, d.Path(IndicesFile), d.Indptr[7], d.Meta.Nodes)
	}, []string{IndicesFile, "out of range", "node 7"}},
	{"negative index", func(t *testing.T, d *Dataset) {
		putInt64(t, d.Path(IndicesFile), 0, -3)
	}, []string{IndicesFile, "out of range", "-3"}},
	{"label out of range", func(t *testing.T, d *Dataset) {
		putInt32(t, d.Path(LabelsFile), 5, int32(d.Meta.Classes))
	}, []string{LabelsFile, "labels[5]"}},
	{"split id out of range", func(t *testing.T, d *Dataset) {
		putInt64(t, d.Path(ValFile), 2, d.Meta.Nodes+10)
	}, []string{ValFile, "entry 2"}},
	{"meta edges wrong", func(t *testing.T, d *Dataset) {
		editMeta(t, d, func(m map[string]any) { m["edges"] = m["edges"].(float64) + 1 })
	}, []string{MetaFile, IndicesFile}},
	{"meta bad dtype", func(t *testing.T, d *Dataset) {
		editMeta(t, d, func(m map[string]any) { m["dtypes"].(map[string]any)["indices"] = "int32" })
	}, []string{MetaFile, "dtypes"}},
	{"meta not json", func(t *testing.T, d *Dataset) {
		if err := os.WriteFile(d.Path(MetaFile), []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
	}, []string{MetaFile}},
}

// templateDataset generates one tiny dataset per test binary run; tests
// that damage a dataset work on copies (copyDataset) to stay fast under -race.
var templateDir string

func copyDataset(t *testing.T, root, name string) *Dataset {
	t.Helper()
	if templateDir == "" {
		base, err := os.MkdirTemp("", "outcore-dataset-template-")
		if err != nil {
			t.Fatal(err)
		}
		templateDir = genTiny(t, base, "template", nil).Dir
	}
	dst := filepath.Join(root, name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(templateDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		b, err := os.ReadFile(filepath.Join(templateDir, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, de.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestMain(m *testing.M) {
	code := m.Run()
	if templateDir != "" {
		os.RemoveAll(filepath.Dir(templateDir))
	}
	os.Exit(code)
}

func TestOpenDetectsCorruption(t *testing.T) {
	root := t.TempDir()
	for i, c := range corruptions {
		t.Run(c.name, func(t *testing.T) {
			d := copyDataset(t, root, "c"+string(rune('a'+i)))
			c.do(t, d)
			_, err := Open(d.Dir)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open: %v, want ErrCorrupt", err)
			}
			if _, verr := Verify(d.Dir, VerifyOptions{}); !errors.Is(verr, ErrCorrupt) {
				t.Errorf("Verify: %v, want ErrCorrupt", verr)
			}
			// OpenQuick sees damage to meta.json, sizes and indptr only.
			_, qerr := OpenQuick(d.Dir)
			quick := !strings.Contains(c.name, "index") && !strings.Contains(c.name, "label out") && !strings.Contains(c.name, "split id")
			if quick != errors.Is(qerr, ErrCorrupt) {
				t.Errorf("OpenQuick: %v (expected to detect: %v)", qerr, quick)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestVerifyDetects(t *testing.T) {
	root := t.TempDir()
	cases := []struct {
		name string
		do   func(t *testing.T, d *Dataset)
		opt  VerifyOptions
		want string
	}{
		{"NaN feature", func(t *testing.T, d *Dataset) {
			putUint32(t, d.Path(FeaturesFile), 3*int64(d.Meta.FeatureDim)+5, 0x7fc00000)
		}, VerifyOptions{Features: true}, "non-finite value NaN at row 3, column 5"},
		{"split overlap", func(t *testing.T, d *Dataset) {
			tr, _ := d.TrainIDs()
			putInt64(t, d.Path(TestFile), 0, tr[0])
		}, VerifyOptions{}, "also in the train split"},
		{"unsorted neighbours", func(t *testing.T, d *Dataset) {
			var v int64
			for d.InDegree(v) < 3 {
				v++
			}
			a := d.Indptr[v]
			idx, _ := d.LoadIndices()
			putInt64(t, d.Path(IndicesFile), a, idx[a+1])
			putInt64(t, d.Path(IndicesFile), a+1, idx[a])
		}, VerifyOptions{}, "not strictly ascending"},
		{"undirected claim false", func(t *testing.T, d *Dataset) {
			editMeta(t, d, func(m map[string]any) { m["undirected"] = true })
		}, VerifyOptions{}, "undirected"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := copyDataset(t, root, "v"+string(rune('a'+i)))
			if _, err := Verify(d.Dir, c.opt); err != nil {
				t.Fatalf("clean dataset: %v", err)
			}
			c.do(t, d)
			if _, err := Open(d.Dir); err != nil {
				t.Fatalf("Open should still pass (only Verify sees this): %v", err)
			}
			_, err := Verify(d.Dir, c.opt)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Verify: %v, want ErrCorrupt containing %q", err, c.want)
			}
		})
	}
}

func TestValidateName(t *testing.T) {
	for _, n := range []string{"", ".", "..", "../x", "a/b", ".hidden", "-x", "a b", strings.Repeat("x", 101), "é"} {
		if err := ValidateName(n); !errors.Is(err, ErrBadName) {
			t.Errorf("ValidateName(%q) = %v", n, err)
		}
	}
	for _, n := range []string{"cora", "papers-like", "t_1.v2"} {
		if err := ValidateName(n); err != nil {
			t.Errorf("ValidateName(%q) = %v", n, err)
		}
	}
}

func truncate(t *testing.T, p string, size int64) {
	t.Helper()
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
}

func putAt(t *testing.T, p string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func putInt64(t *testing.T, p string, i, x int64) {
	putAt(t, p, i*8, le.AppendUint64(nil, uint64(x)))
}

func putInt32(t *testing.T, p string, i int64, x int32) {
	putAt(t, p, i*4, le.AppendUint32(nil, uint32(x)))
}

func putUint32(t *testing.T, p string, i int64, x uint32) { putAt(t, p, i*4, le.AppendUint32(nil, x)) }

func editMeta(t *testing.T, d *Dataset, f func(map[string]any)) {
	t.Helper()
	p := filepath.Join(d.Dir, MetaFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, _ = json.Marshal(m)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
