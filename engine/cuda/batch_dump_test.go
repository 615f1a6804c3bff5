//go:build cgo

package cuda

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"outcore/engine/graph"
)

// dumpBatch writes one batch for scripts/pyg_same_batch.py, so PyTorch
// Geometric steps on exactly the batch TestSAGEStepTime timed: batch.json
// (per layer src, dst, edges; the input's rows and columns), block<l>_indptr
// and block<l>_indices (int32, little-endian), x (float32 rows × cols) and
// y (int32 labels of the seeds).
func dumpBatch(dir string, blocks []graph.Block, x []float32, rows, cols int, y []int32) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	type layer struct{ Src, Dst, Edges int }
	meta := struct {
		Layers     []layer
		Rows, Cols int
		Seeds      int
	}{Rows: rows, Cols: cols, Seeds: len(y)}
	write := func(name string, v any) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := binary.Write(f, binary.LittleEndian, v); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	for l, b := range blocks {
		meta.Layers = append(meta.Layers, layer{b.NumSrc, b.NumDst, len(b.Indices)})
		if err := write(fmt.Sprintf("block%d_indptr", l), b.Indptr); err != nil {
			return err
		}
		if err := write(fmt.Sprintf("block%d_indices", l), b.Indices); err != nil {
			return err
		}
	}
	if err := write("x", x[:rows*cols]); err != nil {
		return err
	}
	if err := write("y", y); err != nil {
		return err
	}
	j, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "batch.json"), j, 0o644)
}

// TestDumpBatch: the dump has the files and sizes the script reads.
func TestDumpBatch(t *testing.T) {
	dir := t.TempDir()
	blocks := []graph.Block{{NumSrc: 3, NumDst: 2, Indptr: []int32{0, 1, 3}, Indices: []int32{2, 0, 1}}}
	if err := dumpBatch(dir, blocks, []float32{1, 2, 3, 4, 5, 6, 7}, 3, 2, []int32{4, 5}); err != nil {
		t.Fatal(err)
	}
	for name, size := range map[string]int64{"block0_indptr": 12, "block0_indices": 12, "x": 24, "y": 8} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Size() != size {
			t.Fatalf("%s: %v, size %v, want %d", name, err, st, size)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "batch.json"))
	if err != nil || string(b) != `{"Layers":[{"Src":3,"Dst":2,"Edges":3}],"Rows":3,"Cols":2,"Seeds":2}` {
		t.Fatalf("batch.json %s %v", b, err)
	}
}
