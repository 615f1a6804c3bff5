package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// npyBytes builds a format-1.0 .npy file with a literal shape text.
func npyBytes(descr, shape string, body []byte) []byte {
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape)
	pad := 64 - (10+len(h)+1)%64
	h += strings.Repeat(" ", pad%64) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), 0, 0)
	binary.LittleEndian.PutUint16(b[8:], uint16(len(h)))
	return append(append(b, h...), body...)
}

// TestNPYHugeShapeIsAnError: a header whose element count overflows int64
// (shape (2^62+6, 4) of float32 wraps to 96 bytes) is refused before
// anything is allocated; it used to pass the size check and panic in
// make([]int32, n).
func TestNPYHugeShapeIsAnError(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		shape string
		body  int
		want  string
	}{
		{"4611686018427387910, 4", 96, "more than"},
		{"9223372036854775807, 1", 4, "more than"},
		{"9223372036854775808, 1", 4, "shape entry"},
		{"3074457345618258603, 3", 4, "more than"}, // ×3×4 wraps to 4
		{"1, 9223372036854775807", 4, "more than"},
		{"281474976710656, 4", 16, "more than"}, // 2^48·4·4 = 2^52 > 1 PiB
		{"-1, 4", 16, "shape entry"},
	}
	for _, c := range cases {
		p := filepath.Join(dir, "x.npy")
		if err := os.WriteFile(p, npyBytes("<f4", c.shape, make([]byte, c.body)), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ImportNPY(context.Background(), t.TempDir(), "n", NPYSources{Features: p, Edges: p}, ImportOptions{})
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("shape (%s): %v, want ErrBadInput saying %q", c.shape, err, c.want)
		}
	}
}

// TestImportRejectsNonFinite: NaN and ±Inf features are refused at import
// with the first offending row and column, unless AllowNonFinite; a
// float64 too large for float32 counts as infinite.
func TestImportRejectsNonFinite(t *testing.T) {
	t.Run("linqs", func(t *testing.T) {
		src := t.TempDir()
		os.WriteFile(filepath.Join(src, "m.content"), []byte("a 1 0 X\nb 0 nan Y\nc inf 1 X\n"), 0o644)
		os.WriteFile(filepath.Join(src, "m.cites"), []byte("a b\nb c\n"), 0o644)
		_, err := ImportLINQS(context.Background(), t.TempDir(), "l", src, ImportOptions{Split: "none"})
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "row 1, column 1 is NaN") || !strings.Contains(err.Error(), "line 2") {
			t.Fatalf("err = %v", err)
		}
		d, err := ImportLINQS(context.Background(), t.TempDir(), "l", src, ImportOptions{Split: "none", AllowNonFinite: true})
		if err != nil || d.Meta.Nodes != 3 {
			t.Fatalf("allowed: %v", err)
		}
		if _, err := Verify(d.Dir, VerifyOptions{Features: true}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("verify of the allowed import: %v", err)
		}
	})
	t.Run("ogb", func(t *testing.T) {
		src := t.TempDir()
		os.MkdirAll(filepath.Join(src, "raw"), 0o755)
		os.WriteFile(filepath.Join(src, "raw/node-feat.csv"), []byte("1,2\n3,4\n5,-Inf\n"), 0o644)
		os.WriteFile(filepath.Join(src, "raw/node-label.csv"), []byte("0\n1\n0\n"), 0o644)
		os.WriteFile(filepath.Join(src, "raw/edge.csv"), []byte("0,1\n1,2\n"), 0o644)
		_, err := ImportOGB(context.Background(), t.TempDir(), "o", src, ImportOptions{Split: "none"})
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "row 2, column 1 is -Inf") {
			t.Fatalf("err = %v", err)
		}
		if _, err := ImportOGB(context.Background(), t.TempDir(), "o", src, ImportOptions{Split: "none", AllowNonFinite: true}); err != nil {
			t.Fatalf("allowed: %v", err)
		}
	})
	t.Run("npy", func(t *testing.T) {
		dir := t.TempDir()
		edges := writeNPY(t, filepath.Join(dir, "e.npy"), "<i8", []int64{2, 1}, i64bytes([]int64{0, 1}))
		f32 := writeNPY(t, filepath.Join(dir, "f.npy"), "<f4", []int64{2, 3}, f32bytes([]float32{0, 1, 2, 3, float32(math.NaN()), 5}))
		_, err := ImportNPY(context.Background(), t.TempDir(), "n", NPYSources{Features: f32, Edges: edges}, ImportOptions{Split: "none"})
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "row 1, column 1 is NaN") {
			t.Fatalf("float32 NaN: %v", err)
		}
		var body []byte
		for _, x := range []float64{1, 2, 3, 1e300} {
			body = binary.LittleEndian.AppendUint64(body, math.Float64bits(x))
		}
		f64 := writeNPY(t, filepath.Join(dir, "g.npy"), "<f8", []int64{2, 2}, body)
		_, err = ImportNPY(context.Background(), t.TempDir(), "n", NPYSources{Features: f64, Edges: edges}, ImportOptions{Split: "none"})
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "row 1, column 1 is +Inf") {
			t.Fatalf("float64 1e300: %v", err)
		}
		if _, err := ImportNPY(context.Background(), t.TempDir(), "n", NPYSources{Features: f32, Edges: edges}, ImportOptions{Split: "none", AllowNonFinite: true}); err != nil {
			t.Fatalf("allowed: %v", err)
		}
	})
}

// TestMetaCountsAtInt64Bounds: counts whose sizes would wrap are refused by
// the meta check, before any size comparison or allocation.
func TestMetaCountsAtInt64Bounds(t *testing.T) {
	base := Meta{Format: FormatVersion, Nodes: 2, Edges: 1, FeatureDim: 1, Classes: 1, Dtypes: StandardDtypes}
	base.Files = base.expectedSizes()
	if _, err := parseMeta(mustJSON(t, base)); err != nil {
		t.Fatalf("good meta: %v", err)
	}
	for _, c := range []struct {
		name string
		mod  func(*Meta)
	}{
		{"nodes MaxInt64", func(m *Meta) { m.Nodes = math.MaxInt64 }},
		{"nodes 2^61 (×8 wraps)", func(m *Meta) { m.Nodes = 1 << 61 }},
		{"edges MaxInt64", func(m *Meta) { m.Edges = math.MaxInt64 }},
		{"dim MaxInt", func(m *Meta) { m.FeatureDim = math.MaxInt }},
		{"nodes×dim wraps", func(m *Meta) { m.Nodes, m.FeatureDim = 1<<40, 1<<22 }},
		{"train > nodes", func(m *Meta) { m.Train = 3 }},
		{"labeled MinInt64", func(m *Meta) { m.Labeled = math.MinInt64 }},
	} {
		m := base
		c.mod(&m)
		m.Files = m.expectedSizes() // as a crafted file would record them
		if _, err := parseMeta(mustJSON(t, m)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", c.name, err)
		}
	}
}

func mustJSON(t testing.TB, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzNPYHeader: any bytes give an error or a header whose sizes are
// consistent and bounded.
func FuzzNPYHeader(f *testing.F) {
	f.Add(npyBytes("<f4", "2, 3", nil))
	f.Add(npyBytes("<i8", "5,", nil))
	f.Add(npyBytes("|b1", "7,", nil))
	f.Add(npyBytes(">f8", "1, 1", nil))
	f.Add(npyBytes("<f4", "4611686018427387910, 4", nil))
	f.Add(npyBytes("<u8", "", nil))
	f.Add([]byte("\x93NUMPY\x02\x00\x10\x00\x00\x00{'descr': '<f4'}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := parseNPYHeader("fuzz.npy", bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("error without ErrBadInput: %v", err)
			}
			return
		}
		if a.bytes < 0 || a.bytes > maxNPYBytes || a.elems*int64(a.size) != a.bytes || a.dataOff <= 0 {
			t.Fatalf("inconsistent header: shape %v size %d elems %d bytes %d", a.shape, a.size, a.elems, a.bytes)
		}
		n := int64(1)
		for _, d := range a.shape {
			n *= d
		}
		if n != a.elems {
			t.Fatalf("elems %d, shape %v multiplies to %d", a.elems, a.shape, n)
		}
	})
}

// FuzzLINQSLines: content and cites lines parse or fail with a message; a
// parsed content line has the dimension it was asked for.
func FuzzLINQSLines(f *testing.F) {
	f.Add("p1 0 1 0 1 Neural_Networks", -1)
	f.Add("p2 0.5 nan inf ClassB", 3)
	f.Add("  ", 2)
	f.Add("x 1e39 y", 1)
	f.Add("35 1033", -1)
	f.Fuzz(func(t *testing.T, line string, dim int) {
		id, class, row, ok, err := parseLINQSContent(line, dim, nil)
		if err == nil && ok {
			if id == "" || class == "" || len(row) == 0 || (dim >= 0 && len(row) != dim) {
				t.Fatalf("parsed %q as id %q class %q row %v (dim %d)", line, id, class, row, dim)
			}
			if checkFinite(false, "f", row, 0, len(row)) == nil {
				for _, x := range row {
					if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
						t.Fatalf("checkFinite passed %v", row)
					}
				}
			}
		}
		a, b, ok, err := parseLINQSCite(line)
		if err == nil && ok && (a == "" || b == "") {
			t.Fatalf("cite %q parsed as %q %q", line, a, b)
		}
	})
}

// FuzzOGBLines: feature, label and edge lines of OGB's CSV files.
func FuzzOGBLines(f *testing.F) {
	f.Add("0.1,0.2,-0.3", -1)
	f.Add("1,NaN", 2)
	f.Add("nan", 0)
	f.Add("3,9223372036854775808", 2)
	f.Add("1e31", 1)
	f.Fuzz(func(t *testing.T, s string, dim int) {
		if row, err := parseOGBFeatures(s, dim, nil); err == nil && (len(row) == 0 || dim >= 0 && len(row) != dim) {
			t.Fatalf("features %q → %v (dim %d)", s, row, dim)
		}
		if l, err := parseOGBLabel(s); err == nil && (l < -1 || l > 1<<30) {
			t.Fatalf("label %q → %d", s, l)
		}
		parseOGBEdge(s)
	})
}

// FuzzMeta: any meta.json either fails with ErrCorrupt or has counts whose
// file sizes fit and match.
func FuzzMeta(f *testing.F) {
	m := Meta{Format: FormatVersion, Nodes: 10, Edges: 20, FeatureDim: 4, Classes: 3, Labeled: 5, Train: 2, Val: 1, Test: 1, Dtypes: StandardDtypes}
	m.Files = m.expectedSizes()
	good, _ := json.Marshal(m)
	f.Add(good)
	f.Add([]byte(`{"format":1,"nodes":9223372036854775807}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMeta(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error without ErrCorrupt: %v", err)
			}
			return
		}
		for f, size := range m.expectedSizes() {
			if size < 0 || m.Files[f] != size {
				t.Fatalf("%s: size %d recorded %d", f, size, m.Files[f])
			}
		}
	})
}

// FuzzBinaryChecks writes a dataset whose indptr, indices, labels,
// features and train split are fuzz bytes (meta.json's counts follow their
// lengths) and runs Open and Verify over it: they must report ErrCorrupt or
// succeed, never panic or index out of range.
func FuzzBinaryChecks(f *testing.F) {
	ip := i64bytes([]int64{0, 1, 2, 2})
	ix := i64bytes([]int64{1, 0})
	lb := i32bytes([]int32{0, 1, -1})
	ft := f32bytes([]float32{1, 2, 3})
	tr := i64bytes([]int64{0})
	f.Add(ip, ix, lb, ft, tr, uint8(2), false, false)
	f.Add(ip, ix, lb, ft, tr, uint8(2), true, true)
	f.Add(i64bytes([]int64{0, 5, 1, 2}), ix, lb, ft, tr, uint8(2), true, false)
	f.Add(ip, i64bytes([]int64{math.MaxInt64, -1}), lb, f32bytes([]float32{float32(math.NaN()), 0, 0}), i64bytes([]int64{math.MinInt64}), uint8(1), false, true)
	f.Fuzz(func(t *testing.T, ipB, ixB, lbB, ftB, trB []byte, classes uint8, sorted, undirected bool) {
		n := int64(len(lbB) / 4)
		if n == 0 || n > 1<<12 || len(ixB) > 1<<16 {
			return
		}
		fit := func(b []byte, size int) []byte {
			out := make([]byte, size)
			copy(out, b)
			return out
		}
		labels := fit(lbB, int(n)*4)
		var labeled int64
		for i := int64(0); i < n; i++ {
			if int32(binary.LittleEndian.Uint32(labels[4*i:])) >= 0 {
				labeled++
			}
		}
		m := Meta{Format: FormatVersion, Nodes: n, Edges: int64(len(ixB) / 8), FeatureDim: 1, Classes: int(classes),
			Labeled: labeled, Train: int64(len(trB) / 8), Dtypes: StandardDtypes, Undirected: undirected, SortedNeighbors: sorted}
		if m.Train > n {
			return
		}
		m.Files = m.expectedSizes()
		dir := filepath.Join(t.TempDir(), "d")
		os.MkdirAll(dir, 0o755)
		files := map[string][]byte{
			IndptrFile: fit(ipB, int(m.Files[IndptrFile])), IndicesFile: fit(ixB, int(m.Files[IndicesFile])),
			LabelsFile: labels, FeaturesFile: fit(ftB, int(m.Files[FeaturesFile])), TrainFile: fit(trB, int(m.Files[TrainFile])),
			ValFile: nil, TestFile: nil,
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, MetaFile), mustJSON(t, m), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(dir); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Open: %v", err)
		}
		if _, err := Verify(dir, VerifyOptions{Features: true}); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Verify: %v", err)
		}
	})
}
