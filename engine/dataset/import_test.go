package dataset

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"outcore/internal/osutil"
)

// coraDir is a copy of ../shared/datasets/cora with cora.content gzipped
// (the test checks the decompressed bytes against SHA256SUMS).
const coraDir = "testdata/cora"

// TestImportCora checks the Cora facts from PROVENANCE.md: 2708 nodes, 1433
// features, 7 classes, the 140/500/1000 Planetoid split, and 10556 stored
// edges = the 5278 undirected Planetoid edges in both directions (the 5429
// citation lines contain 302 directed duplicates after symmetrisation and no
// self-loops or unknown papers).
func TestImportCora(t *testing.T) {
	if testing.Short() {
		t.Skip("single-threaded parsing of 7.8 MB; runs in the non-short pass")
	}
	checkCoraCopy(t)
	dir := t.TempDir()
	d, err := ImportLINQS(context.Background(), dir, "cora", coraDir, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := d.Meta
	if m.Nodes != 2708 || m.FeatureDim != 1433 || m.Classes != 7 {
		t.Fatalf("nodes %d dim %d classes %d", m.Nodes, m.FeatureDim, m.Classes)
	}
	if m.Train != 140 || m.Val != 500 || m.Test != 1000 {
		t.Fatalf("split %d/%d/%d", m.Train, m.Val, m.Test)
	}
	if m.Edges != 10556 || !m.Undirected || m.Source.DuplicateEdges != 302 || m.Source.SkippedEdges != 0 {
		t.Fatalf("edges %d undirected %v duplicates %d skipped %d", m.Edges, m.Undirected, m.Source.DuplicateEdges, m.Source.SkippedEdges)
	}
	if m.Labeled != 2708 || m.ClassNames[0] != "Theory" || m.Source.Split == "" {
		t.Fatalf("labeled %d classes %v split %q", m.Labeled, m.ClassNames, m.Source.Split)
	}
	r, err := Verify(d.Dir, VerifyOptions{Features: true})
	if err != nil {
		t.Fatal(err)
	}
	if !r.SymmetryChecked || r.SelfLoops != 0 || math.Abs(r.EdgeHomophily-0.81) > 0.01 {
		t.Fatalf("report %+v", r)
	}
	// 20 training nodes per class (Planetoid).
	labels, _ := d.Labels()
	tr, _ := d.TrainIDs()
	per := make([]int, 7)
	for _, v := range tr {
		per[labels[v]]++
	}
	for k, c := range per {
		if c != 20 {
			t.Errorf("class %d has %d training nodes, want 20", k, c)
		}
	}
	// Features are the binary word vectors: row 0 = paper 31336 has 1s
	// exactly where cora.content says.
	row, _ := d.ReadFeatureRows(0, 1)
	var ones int
	for _, x := range row {
		if x != 0 && x != 1 {
			t.Fatalf("non-binary feature %v", x)
		}
		if x == 1 {
			ones++
		}
	}
	ids, _ := os.ReadFile(filepath.Join(d.Dir, NodeIDsFile))
	if !strings.HasPrefix(string(ids), "31336\n") || ones != 20 { // awk: first line of cora.content sums to 20
		t.Fatalf("node 0 is %q with %d ones", strings.SplitN(string(ids), "\n", 2)[0], ones)
	}
}

// checkCoraCopy verifies testdata/cora against its SHA256SUMS (the LINQS
// release's checksums), so the facts below are about the real Cora.
func checkCoraCopy(t *testing.T) {
	t.Helper()
	sums, err := os.ReadFile(filepath.Join(coraDir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		want, name, _ := strings.Cut(line, "  ")
		if strings.HasPrefix(name, "planetoid/") {
			continue // not copied; unused by the importer
		}
		var b []byte
		if name == "cora.content" {
			f, err := os.Open(filepath.Join(coraDir, "cora.content.gz"))
			if err != nil {
				t.Fatal(err)
			}
			zr, err := gzip.NewReader(f)
			if err != nil {
				t.Fatal(err)
			}
			b, err = io.ReadAll(zr)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
		} else if b, err = os.ReadFile(filepath.Join(coraDir, name)); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != want {
			t.Fatalf("testdata/cora/%s: sha256 %s, SHA256SUMS says %s", name, got, want)
		}
	}
}

func TestImportLINQSMini(t *testing.T) {
	d, err := ImportLINQS(context.Background(), t.TempDir(), "mini", "testdata/linqs-mini", ImportOptions{Split: "random", TrainFrac: 0.4, ValFrac: 0.2, TestFrac: 0.4})
	if err != nil {
		t.Fatal(err)
	}
	m := d.Meta
	if m.Nodes != 5 || m.FeatureDim != 4 || m.Classes != 2 || m.Edges != 6 {
		t.Fatalf("meta %+v", m)
	}
	if s := m.Source; s.SkippedEdges != 2 || s.DuplicateEdges != 4 || s.SelfLoops != 1 {
		t.Fatalf("source %+v", s)
	}
	if !slices.Equal(m.ClassNames, []string{"Alpha", "Beta"}) {
		t.Fatalf("class names %v", m.ClassNames)
	}
	idx, _ := d.LoadIndices()
	// p10 (0) ← {p20 (1), p30 (2)}; p20 ← {p10}; p30 ← {p10}; p40 (3) ← {p50 (4)}; p50 ← {p40}
	want := [][]int64{{1, 2}, {0}, {0}, {4}, {3}}
	for v, w := range want {
		if got := idx[d.Indptr[v]:d.Indptr[v+1]]; !slices.Equal(got, w) {
			t.Errorf("in(%d) = %v, want %v", v, got, w)
		}
	}
	if m.Train+m.Val+m.Test == 0 || !strings.HasPrefix(m.Source.Split, "random") {
		t.Errorf("random split: %d/%d/%d %q", m.Train, m.Val, m.Test, m.Source.Split)
	}
}

// TestImportLINQSBad: each malformed input gives its own error naming file
// and line, and no dataset (or temporary directory) is left behind.
func TestImportLINQSBad(t *testing.T) {
	good, _ := os.ReadFile("testdata/linqs-mini/mini.content")
	goodCites, _ := os.ReadFile("testdata/linqs-mini/mini.cites")
	cases := []struct {
		name, content, cites string
		want                 []string
	}{
		{"short row", string(good) + "p60\t1\t0\tAlpha\n", "", []string{"mini.content line 6", "2 feature values, but the first line has 4"}},
		{"not a number", strings.Replace(string(good), "p20\t0\t1", "p20\tx\t1", 1), "", []string{"mini.content line 2", `feature 1 = "x" is not a number`}},
		{"duplicate id", string(good) + "p10\t1\t0\t0\t1\tAlpha\n", "", []string{"mini.content line 6", `paper id "p10" repeats`}},
		{"too few fields", string(good) + "p70\tAlpha\n", "", []string{"mini.content line 6", "2 fields"}},
		{"cites three fields", "", string(goodCites) + "p10\tp20\tp30\n", []string{"mini.cites line 9", "3 fields"}},
		{"empty content", "\n", "", []string{"no nodes"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := t.TempDir()
			content, cites := c.content, c.cites
			if content == "" {
				content = string(good)
			}
			if cites == "" {
				cites = string(goodCites)
			}
			os.WriteFile(filepath.Join(src, "mini.content"), []byte(content), 0o644)
			os.WriteFile(filepath.Join(src, "mini.cites"), []byte(cites), 0o644)
			out := t.TempDir()
			_, err := ImportLINQS(context.Background(), out, "m", src, ImportOptions{})
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("err = %v, want ErrBadInput", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if des, _ := os.ReadDir(out); len(des) != 0 {
				t.Errorf("left behind %v", des)
			}
		})
	}
	if _, err := ImportLINQS(context.Background(), t.TempDir(), "m", t.TempDir(), ImportOptions{}); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "no *.content or *.content.gz file") {
		t.Errorf("empty dir: %v", err)
	}
}

func TestImportOGB(t *testing.T) {
	for _, c := range []struct {
		undirected bool
		edges      int64
	}{{false, 12}, {true, 20}} {
		t.Run(fmt.Sprint("undirected=", c.undirected), func(t *testing.T) {
			d, err := ImportOGB(context.Background(), t.TempDir(), "o", "testdata/ogb-tiny", ImportOptions{Undirected: c.undirected})
			if err != nil {
				t.Fatal(err)
			}
			m := d.Meta
			if m.Nodes != 10 || m.FeatureDim != 3 || m.Classes != 3 || m.Edges != c.edges || m.Undirected != c.undirected {
				t.Fatalf("meta %+v", m)
			}
			if m.Train != 4 || m.Val != 2 || m.Test != 3 || m.Labeled != 9 || m.Source.SelfLoops != 1 {
				t.Fatalf("meta %+v", m)
			}
			labels, _ := d.Labels()
			if labels[8] != -1 || labels[9] != 2 {
				t.Fatalf("labels %v", labels)
			}
			row, _ := d.ReadFeatureRows(4, 1)
			if !slices.Equal(row, []float32{1.2, 1.3, 1.4}) {
				t.Fatalf("row 4 = %v", row)
			}
			idx, _ := d.LoadIndices()
			if !c.undirected {
				want := map[int64][]int64{0: {1, 5, 6}, 1: {0, 2, 3}, 2: {7}, 3: {8, 9}, 5: {9}, 9: {2, 3}}
				for v := int64(0); v < 10; v++ {
					if got := idx[d.Indptr[v]:d.Indptr[v+1]]; !slices.Equal(got, want[v]) && !(len(got) == 0 && want[v] == nil) {
						t.Errorf("in(%d) = %v, want %v", v, got, want[v])
					}
				}
			}
			if _, err := Verify(d.Dir, VerifyOptions{Features: true}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestImportOGBBad(t *testing.T) {
	copyTree := func(t *testing.T) string {
		dst := t.TempDir()
		filepath.Walk("testdata/ogb-tiny", func(p string, info os.FileInfo, err error) error {
			rel, _ := filepath.Rel("testdata/ogb-tiny", p)
			if info.IsDir() {
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			b, _ := os.ReadFile(p)
			return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
		})
		return dst
	}
	cases := []struct {
		name string
		do   func(dir string)
		want string
	}{
		{"missing edges", func(dir string) { os.Remove(filepath.Join(dir, "raw/edge.csv.gz")) }, "missing"},
		{"bad edge line", func(dir string) {
			os.Remove(filepath.Join(dir, "raw/edge.csv.gz"))
			os.WriteFile(filepath.Join(dir, "raw/edge.csv"), []byte("0,1\n2;3\n"), 0o644)
		}, "edge.csv line 2: want src,dst"},
		{"edge out of range", func(dir string) {
			os.Remove(filepath.Join(dir, "raw/edge.csv.gz"))
			os.WriteFile(filepath.Join(dir, "raw/edge.csv"), []byte("0,1\n2,10\n"), 0o644)
		}, "edge.csv line 2: invalid input: edge 2→10: node id out of range"},
		{"label count", func(dir string) {
			os.Remove(filepath.Join(dir, "raw/node-label.csv.gz"))
			os.WriteFile(filepath.Join(dir, "raw/node-label.csv"), []byte("0\n1\n"), 0o644)
		}, "2 labels for 10 nodes"},
		{"corrupt gzip", func(dir string) {
			os.WriteFile(filepath.Join(dir, "raw/node-feat.csv.gz"), []byte("not gzip"), 0o644)
		}, "node-feat.csv.gz"},
		{"split overlap", func(dir string) {
			os.Remove(filepath.Join(dir, "split/time/test.csv.gz"))
			os.WriteFile(filepath.Join(dir, "split/time/test.csv"), []byte("6\n0\n"), 0o644)
		}, "node 0 is in both the train and the test split"},
		{"unlabeled in split", func(dir string) {
			os.Remove(filepath.Join(dir, "split/time/test.csv.gz"))
			os.WriteFile(filepath.Join(dir, "split/time/test.csv"), []byte("8\n"), 0o644)
		}, "node 8 has no label"},
		{"no raw", func(dir string) { os.RemoveAll(filepath.Join(dir, "raw")) }, "no raw/ directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := copyTree(t)
			c.do(src)
			out := t.TempDir()
			_, err := ImportOGB(context.Background(), out, "o", src, ImportOptions{})
			if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrBadInput containing %q", err, c.want)
			}
			if des, _ := os.ReadDir(out); len(des) != 0 {
				t.Errorf("left behind %v", des)
			}
		})
	}
}

// writeNPY writes a C-order little-endian .npy (format 1.0) of the given
// dtype descr and shape; data is the raw body.
func writeNPY(t testing.TB, path, descr string, shape []int64, data []byte) string {
	t.Helper()
	var dims []string
	for _, s := range shape {
		dims = append(dims, fmt.Sprint(s))
	}
	sh := strings.Join(dims, ", ")
	if len(shape) == 1 {
		sh += ","
	}
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, sh)
	pad := 64 - (10+len(h)+1)%64
	h += strings.Repeat(" ", pad%64) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), 0, 0)
	binary.LittleEndian.PutUint16(b[8:], uint16(len(h)))
	b = append(b, h...)
	b = append(b, data...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func f32bytes(xs []float32) []byte { return slices.Clone(osutil.Bytes(xs)) }
func i64bytes(xs []int64) []byte   { return slices.Clone(osutil.Bytes(xs)) }
func i32bytes(xs []int32) []byte   { return slices.Clone(osutil.Bytes(xs)) }

func TestNPYHeaderNumpyFiles(t *testing.T) {
	for _, c := range []struct {
		file  string
		descr string
		shape []int64
		err   string
	}{
		{"data_float32_2x3_corder.npy", "<f4", []int64{2, 3}, ""},
		{"data_float64_2x3_corder.npy", "<f8", []int64{2, 3}, ""},
		{"data_int64_2x3_corder.npy", "<i8", []int64{2, 3}, ""},
		{"data_int32_6x1_corder.npy", "<i4", []int64{6, 1}, ""},
		{"data_float32_2x3_forder.npy", "", nil, "Fortran-order"},
	} {
		a, err := openNPY(filepath.Join("testdata/npy", c.file))
		if c.err != "" {
			if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err = %v", c.file, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if a.descr != c.descr || !slices.Equal(a.shape, c.shape) {
			t.Errorf("%s: descr %s shape %v", c.file, a.descr, a.shape)
		}
		var got []int64
		if a.kind == 'f' {
			a.streamFloat32(0, a.count(), 1, func(_ int64, xs []float32) error {
				for _, x := range xs {
					got = append(got, int64(x))
				}
				return nil
			})
		} else {
			a.streamInt64(0, a.count(), false, func(_ int64, xs []int64) error { got = append(got, xs...); return nil })
		}
		if !slices.Equal(got, []int64{0, 1, 2, 3, 4, 5}) {
			t.Errorf("%s: data %v, want 0..5", c.file, got)
		}
		a.Close()
	}
}

// npyFixture writes a small graph as .npy files: 6 nodes, 2 features
// (row v = [v, -v]), labels v%3 except node 5 unlabeled.
func npyFixture(t *testing.T) (dir string, src NPYSources) {
	dir = t.TempDir()
	feat := make([]float32, 12)
	for v := 0; v < 6; v++ {
		feat[2*v], feat[2*v+1] = float32(v), -float32(v)
	}
	src.Features = writeNPY(t, filepath.Join(dir, "x.npy"), "<f4", []int64{6, 2}, f32bytes(feat))
	src.Labels = writeNPY(t, filepath.Join(dir, "y.npy"), "<i4", []int64{6}, i32bytes([]int32{0, 1, 2, 0, 1, -1}))
	// edge_index (2, E): 0→1, 2→1, 3→0, 4→4 (self-loop), 5→2, 0→1 (dup)
	src.Edges = writeNPY(t, filepath.Join(dir, "ei.npy"), "<i8", []int64{2, 6}, i64bytes([]int64{0, 2, 3, 4, 5, 0, 1, 1, 0, 4, 2, 1}))
	src.Train = writeNPY(t, filepath.Join(dir, "train.npy"), "|b1", []int64{6}, []byte{1, 1, 0, 0, 0, 0})
	src.Val = writeNPY(t, filepath.Join(dir, "val.npy"), "<i8", []int64{1}, i64bytes([]int64{2}))
	src.Test = writeNPY(t, filepath.Join(dir, "test.npy"), "<i8", []int64{2}, i64bytes([]int64{3, 4}))
	return dir, src
}

func TestImportNPY(t *testing.T) {
	dir, src := npyFixture(t)
	check := func(t *testing.T, d *Dataset, wantIn [][]int64) {
		t.Helper()
		m := d.Meta
		if m.Nodes != 6 || m.FeatureDim != 2 || m.Classes != 3 || m.Labeled != 5 || m.Train != 2 || m.Val != 1 || m.Test != 2 {
			t.Fatalf("meta %+v", m)
		}
		row, _ := d.ReadFeatureRows(3, 1)
		if !slices.Equal(row, []float32{3, -3}) {
			t.Fatalf("row 3 = %v", row)
		}
		idx, _ := d.LoadIndices()
		for v, w := range wantIn {
			if got := idx[d.Indptr[v]:d.Indptr[v+1]]; !slices.Equal(got, w) && !(len(got) == 0 && len(w) == 0) {
				t.Errorf("in(%d) = %v, want %v", v, got, w)
			}
		}
	}
	directed := [][]int64{{3}, {0, 2}, {5}, {}, {}, {}}
	t.Run("edge_index 2xE", func(t *testing.T) {
		d, err := ImportNPY(context.Background(), t.TempDir(), "n", src, ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		check(t, d, directed)
		if d.Meta.Source.DuplicateEdges != 1 || d.Meta.Source.SelfLoops != 1 {
			t.Errorf("source %+v", d.Meta.Source)
		}
	})
	t.Run("edge list Ex2 float64 features", func(t *testing.T) {
		s := src
		feat := make([]float64, 12)
		for v := 0; v < 6; v++ {
			feat[2*v], feat[2*v+1] = float64(v), -float64(v)
		}
		fb := make([]byte, 0, 96)
		for _, x := range feat {
			fb = binary.LittleEndian.AppendUint64(fb, math.Float64bits(x))
		}
		s.Features = writeNPY(t, filepath.Join(dir, "x64.npy"), "<f8", []int64{6, 2}, fb)
		s.Edges = writeNPY(t, filepath.Join(dir, "el.npy"), "<i4", []int64{3, 2}, i32bytes([]int32{0, 1, 2, 1, 3, 0}))
		d, err := ImportNPY(context.Background(), t.TempDir(), "n", s, ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		check(t, d, [][]int64{{3}, {0, 2}, {}, {}, {}, {}})
	})
	t.Run("undirected", func(t *testing.T) {
		d, err := ImportNPY(context.Background(), t.TempDir(), "n", src, ImportOptions{Undirected: true})
		if err != nil {
			t.Fatal(err)
		}
		check(t, d, [][]int64{{1, 3}, {0, 2}, {1, 5}, {0}, {}, {2}})
		if _, err := Verify(d.Dir, VerifyOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("csc", func(t *testing.T) {
		s := src
		s.Edges = ""
		s.Indptr = writeNPY(t, filepath.Join(dir, "ip.npy"), "<i8", []int64{7}, i64bytes([]int64{0, 1, 3, 4, 4, 4, 4}))
		s.Indices = writeNPY(t, filepath.Join(dir, "ix.npy"), "<i4", []int64{4}, i32bytes([]int32{3, 0, 2, 5}))
		d, err := ImportNPY(context.Background(), t.TempDir(), "n", s, ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		check(t, d, directed)
		if !d.Meta.SortedNeighbors {
			t.Errorf("sorted CSC input not marked sorted")
		}
	})
}

func TestImportNPYBad(t *testing.T) {
	dir, src := npyFixture(t)
	cases := []struct {
		name string
		mod  func(s *NPYSources)
		want string
	}{
		{"features 1-D", func(s *NPYSources) {
			s.Features = writeNPY(t, filepath.Join(dir, "b1.npy"), "<f4", []int64{12}, f32bytes(make([]float32, 12)))
		}, "shape (12,) with 1 dimension(s), want 2 dimensions (nodes, feature_dim)"},
		{"features 3-D", func(s *NPYSources) {
			s.Features = writeNPY(t, filepath.Join(dir, "b2.npy"), "<f4", []int64{6, 2, 1}, f32bytes(make([]float32, 12)))
		}, "shape (6, 2, 1) with 3 dimension(s)"},
		{"features int", func(s *NPYSources) {
			s.Features = writeNPY(t, filepath.Join(dir, "b3.npy"), "<i8", []int64{6, 2}, i64bytes(make([]int64, 12)))
		}, "dtype <i8, want float32 or float64"},
		{"features truncated", func(s *NPYSources) {
			b, _ := os.ReadFile(src.Features)
			os.WriteFile(filepath.Join(dir, "b4.npy"), b[:len(b)-4], 0o644)
			s.Features = filepath.Join(dir, "b4.npy")
		}, "header (shape (6, 2), <f4) implies"},
		{"labels wrong length", func(s *NPYSources) {
			s.Labels = writeNPY(t, filepath.Join(dir, "b5.npy"), "<i4", []int64{5}, i32bytes(make([]int32, 5)))
		}, "5 labels for 6 nodes"},
		{"labels 2-D", func(s *NPYSources) {
			s.Labels = writeNPY(t, filepath.Join(dir, "b6.npy"), "<i4", []int64{3, 2}, i32bytes(make([]int32, 6)))
		}, "want (6,) or (6, 1)"},
		{"edges 3xE", func(s *NPYSources) {
			s.Edges = writeNPY(t, filepath.Join(dir, "b7.npy"), "<i8", []int64{3, 3}, i64bytes(make([]int64, 9)))
		}, "want (2, E) or (E, 2)"},
		{"edge out of range", func(s *NPYSources) {
			s.Edges = writeNPY(t, filepath.Join(dir, "b8.npy"), "<i8", []int64{2, 2}, i64bytes([]int64{0, 1, 6, 2}))
		}, "edge 0: invalid input: edge 0→6: node id out of range"},
		{"big-endian", func(s *NPYSources) {
			s.Labels = writeNPY(t, filepath.Join(dir, "b9.npy"), ">i4", []int64{6}, make([]byte, 24))
		}, "big-endian"},
		{"not npy", func(s *NPYSources) {
			os.WriteFile(filepath.Join(dir, "b10.npy"), []byte("hello"), 0o644)
			s.Labels = filepath.Join(dir, "b10.npy")
		}, "not a valid .npy"},
		{"mask wrong length", func(s *NPYSources) {
			s.Train = writeNPY(t, filepath.Join(dir, "b11.npy"), "|b1", []int64{5}, make([]byte, 5))
		}, "length 5, want nodes = 6"},
		{"csc non-monotone", func(s *NPYSources) {
			s.Edges = ""
			s.Indptr = writeNPY(t, filepath.Join(dir, "b12.npy"), "<i8", []int64{7}, i64bytes([]int64{0, 2, 1, 4, 4, 4, 4}))
			s.Indices = writeNPY(t, filepath.Join(dir, "b13.npy"), "<i8", []int64{4}, i64bytes([]int64{0, 1, 2, 3}))
		}, "not non-decreasing: indptr[1] = 2 > indptr[2] = 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := src
			c.mod(&s)
			out := t.TempDir()
			_, err := ImportNPY(context.Background(), out, "n", s, ImportOptions{})
			if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrBadInput containing %q", err, c.want)
			}
			if des, _ := os.ReadDir(out); len(des) != 0 {
				t.Errorf("left behind %v", des)
			}
		})
	}
}

// TestEdgeSorterExternal: with a tiny memory budget (many buckets, several
// distribution passes) the external sort gives the same CSC as sorting in
// memory.
func TestEdgeSorterExternal(t *testing.T) {
	n, e := 5000, 60000
	if testing.Short() {
		e = 15000
	}
	r := newStream(7, 0, streamGlobal)
	type edge struct{ u, v int64 }
	edges := make([]edge, e)
	for i := range edges {
		// skewed destinations so some buckets hold one heavy node
		v := int64(r.intn(uint64(n)))
		if i%3 == 0 {
			v = int64(r.intn(10))
		}
		edges[i] = edge{int64(r.intn(uint64(n))), v}
	}
	want := make([][]int64, n)
	for _, x := range edges {
		if x.u != x.v {
			want[x.v] = append(want[x.v], x.u)
		}
	}
	for v := range want {
		slices.Sort(want[v])
		want[v] = slices.Compact(want[v])
	}
	for _, budget := range []int64{97, 1 << 20} {
		t.Run(fmt.Sprint("budget ", budget), func(t *testing.T) {
			w, err := NewWriter(t.TempDir(), "s", false)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			s, err := newEdgeSorter(w.Dir(), int64(n), budget, true)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range edges {
				if err := s.Add(x.u, x.v); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Finish(w); err != nil {
				t.Fatal(err)
			}
			ip := make([]int64, n+1)
			readWhole(filepath.Join(w.Dir(), IndptrFile), osutil.Bytes(ip))
			idx := make([]int64, ip[n])
			readWhole(filepath.Join(w.Dir(), IndicesFile), osutil.Bytes(idx))
			for v := range want {
				if got := idx[ip[v]:ip[v+1]]; !slices.Equal(got, want[v]) && !(len(got) == 0 && len(want[v]) == 0) {
					t.Fatalf("in(%d) = %v, want %v", v, got, want[v])
				}
			}
			if _, err := os.Stat(filepath.Join(w.Dir(), ".edgesort")); !os.IsNotExist(err) {
				t.Errorf("temporary sort files left: %v", err)
			}
		})
	}
}

// exportNPY writes d as .npy files (features, labels, edge_index (2, E),
// and split id arrays) into dir, streaming, and returns the sources.
func exportNPY(t testing.TB, d *Dataset, dir string) NPYSources {
	t.Helper()
	var src NPYSources
	hdr := func(path, descr string, shape []int64) *os.File {
		writeNPY(t, path, descr, shape, nil)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	copyBody := func(f *os.File, from string) {
		in, err := os.Open(d.Path(from))
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		if _, err := io.Copy(f, in); err != nil {
			t.Fatal(err)
		}
	}
	src.Features = filepath.Join(dir, "x.npy")
	f := hdr(src.Features, "<f4", []int64{d.Meta.Nodes, int64(d.Meta.FeatureDim)})
	copyBody(f, FeaturesFile)
	f.Close()
	src.Labels = filepath.Join(dir, "y.npy")
	f = hdr(src.Labels, "<i4", []int64{d.Meta.Nodes})
	copyBody(f, LabelsFile)
	f.Close()
	src.Edges = filepath.Join(dir, "edge_index.npy")
	f = hdr(src.Edges, "<i8", []int64{2, d.Meta.Edges})
	copyBody(f, IndicesFile) // row 0: sources = in-neighbours
	buf := make([]int64, 0, 1<<16)
	for v := int64(0); v < d.Meta.Nodes; v++ { // row 1: destinations
		for k := d.Indptr[v]; k < d.Indptr[v+1]; k++ {
			buf = append(buf, v)
			if len(buf) == cap(buf) {
				f.Write(osutil.Bytes(buf))
				buf = buf[:0]
			}
		}
	}
	f.Write(osutil.Bytes(buf))
	f.Close()
	for i, s := range []string{TrainFile, ValFile, TestFile} {
		p := filepath.Join(dir, s+".npy")
		f = hdr(p, "<i8", []int64{[]int64{d.Meta.Train, d.Meta.Val, d.Meta.Test}[i]})
		copyBody(f, s)
		f.Close()
		*[]*string{&src.Train, &src.Val, &src.Test}[i] = p
	}
	src.Classes = d.Meta.Classes
	return src
}

// TestImportNPYRoundTrip: a generated dataset exported to .npy and imported
// again (edge list through the external sort, with a budget small enough to
// need many buckets) is byte-identical in every data file.
func TestImportNPYRoundTrip(t *testing.T) {
	d := genTiny(t, t.TempDir(), "orig", nil)
	src := exportNPY(t, d, t.TempDir())
	e, err := ImportNPY(context.Background(), t.TempDir(), "back", src, ImportOptions{SortBudget: 5000})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range DataFiles {
		a, _ := os.ReadFile(d.Path(f))
		b, _ := os.ReadFile(e.Path(f))
		if !slices.Equal(a, b) {
			t.Errorf("%s differs after the npy round trip (%d vs %d bytes)", f, len(a), len(b))
		}
	}
	if e.Meta.Source.DuplicateEdges != 0 || e.Meta.Source.SelfLoops != 0 || *e.Meta.EdgeHomophily != *d.Meta.EdgeHomophily {
		t.Errorf("source %+v, homophily %v vs %v", e.Meta.Source, *e.Meta.EdgeHomophily, *d.Meta.EdgeHomophily)
	}
}
