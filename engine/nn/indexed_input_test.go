package nn

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestIndexedInputMatchesGathered: a model reading its input through an
// index (GNNDrive's alias list into the feature buffer) computes exactly
// what it computes on the gathered rows: the same logits, loss and
// parameter gradients, and the same parameters after the Adam step, for
// every kind, with and without dropout, in place or through the fallback
// copy.
func TestIndexedInputMatchesGathered(t *testing.T) {
	cases := []struct {
		kind                string
		in, hidden, classes int
		dropout             float32
		inPlace             bool
	}{
		{KindSAGE, 8, 16, 3, 0.5, true},
		{KindSAGE, 8, 16, 3, 0, true},
		{KindSAGE, 24, 4, 3, 0.5, false}, // wider in than out: may transform first
		{KindGCN, 8, 16, 3, 0, true},
		{KindGCN, 24, 4, 3, 0, false},
		{KindGCN, 24, 4, 3, 0.5, true}, // input dropout copies anyway
		{KindGAT, 8, 16, 3, 0.5, true},
		{KindGAT, 8, 16, 3, 0, false},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s/%dx%d", c.kind, c.in, c.hidden)
		if c.dropout > 0 {
			name += "/dropout"
		}
		t.Run(name, func(t *testing.T) {
			if got := IndexedInPlace(c.kind, c.in, c.hidden, c.classes, 2, float64(c.dropout)); got != c.inPlace {
				t.Fatalf("IndexedInPlace = %v, want %v", got, c.inPlace)
			}
			rng := rand.New(rand.NewPCG(7, 11))
			blocks := chainBlocks(rng, []int{60, 25, 9}, 5, false)
			const tableRows = 100
			table := randTensor(rng, tableRows, c.in)
			idx := make([]int32, blocks[0].NumSrc)
			for i := range idx {
				idx[i] = int32(rng.IntN(tableRows))
			}
			xi := Indexed{Base: table.Data, Cols: c.in, Idx: idx}
			var x Tensor
			xi.GatherInto(&x)
			labels := make([]int32, blocks[1].NumDst)
			for i := range labels {
				labels[i] = int32(rng.IntN(c.classes))
			}
			heads := 2
			a, err := NewModel(c.kind, c.in, c.hidden, c.classes, 2, heads, c.dropout, 5)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := NewModel(c.kind, c.in, c.hidden, c.classes, 2, heads, c.dropout, 5)
			for step := 0; step < 3; step++ {
				la, _ := a.Step(blocks, &x, labels)
				// the rows are handed back after the first layer: the step
				// goes on right with the table overwritten
				consumed := 0
				saved := append([]float32(nil), table.Data...)
				xi.Consumed = func() {
					consumed++
					for i := range table.Data {
						table.Data[i] = float32(i) // another batch's rows
					}
				}
				lb, _ := b.StepIndexed(blocks, xi, labels)
				copy(table.Data, saved)
				if consumed != 1 {
					t.Fatalf("step %d: Consumed called %d times", step, consumed)
				}
				if la != lb {
					t.Fatalf("step %d: loss %v gathered, %v indexed", step, la, lb)
				}
				// in place: no copy of the input in the workspace; else
				// exactly one
				extra := b.arena.f.peak - a.arena.f.peak
				if want := map[bool]int{true: 0, false: x.Rows * x.Cols}[c.inPlace || (c.kind != KindSAGE && c.dropout > 0)]; extra != want {
					t.Fatalf("step %d: indexed workspace %d floats more than gathered, want %d", step, extra, want)
				}
				pa, pb := a.Params(), b.Params()
				for i := range pa {
					if !slices.Equal(pa[i].Grad.Data, pb[i].Grad.Data) || !slices.Equal(pa[i].Value.Data, pb[i].Value.Data) {
						t.Fatalf("step %d: parameter %s differs", step, pa[i].Name)
					}
				}
			}
			ya := a.Infer(blocks, &x)
			yb := b.ForwardIndexed(blocks, xi, false)
			if !slices.Equal(ya.Data[:ya.Rows*ya.Cols], yb.Data[:yb.Rows*yb.Cols]) {
				t.Fatal("inference logits differ")
			}
		})
	}
}

// TestIndexedInputChecksIndex: an alias outside the table is refused with
// the row named, not read.
func TestIndexedInputChecksIndex(t *testing.T) {
	xi := Indexed{Base: make([]float32, 4*3), Cols: 3, Idx: []int32{0, 3, 4}}
	err := xi.Check()
	if err == nil || !strings.Contains(err.Error(), "row 2 points at 4") {
		t.Fatalf("Check = %v, want row 2 named", err)
	}
	xi.Idx[2] = -1
	if xi.Check() == nil {
		t.Fatal("negative index accepted")
	}
}
