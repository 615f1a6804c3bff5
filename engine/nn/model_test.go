package nn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"outcore/engine/graph"
)

// chainBlocks makes L chained random blocks: NumDst of block l = NumSrc of l+1.
func chainBlocks(rng *rand.Rand, sizes []int, maxDeg int, withDeg bool) []graph.Block {
	var bs []graph.Block
	for l := 0; l+1 < len(sizes); l++ {
		bs = append(bs, randomBlock(rng, sizes[l+1], sizes[l], maxDeg, withDeg))
	}
	return bs
}

// refModelLoss recomputes Model.Forward + mean cross-entropy in float64 from
// the float64 parameter copies ps (in Params() order), using the dropout
// masks of the model's last training step.
func refModelLoss(m *Model, blocks []graph.Block, x vec, ps []vec, labels []int32) float64 {
	p := float64(m.Dropout)
	drop := func(h vec, site int) {
		key := m.dropKey(site)
		for i := range h {
			if DropoutKeep(i, m.Dropout, key) {
				h[i] /= 1 - p
			} else {
				h[i] = 0
			}
		}
	}
	h := append(vec{}, x...)
	if m.InputDropout && p > 0 {
		drop(h, 0)
	}
	k := 0
	for l, layer := range m.Layers {
		b := &blocks[l]
		switch ly := layer.(type) {
		case *SAGE:
			h = refSAGE(b, h, ly.In, ps[k], ps[k+1], ps[k+2], ly.Out)
		case *GCN:
			h = refGCN(b, h, ly.In, ps[k], ps[k+1], ly.Out)
		case *GAT:
			key := m.dropKey(1000 + l)
			keep := func(e int) float64 {
				if p == 0 {
					return 1
				}
				if DropoutKeep(e, m.Dropout, key) {
					return 1 / (1 - p)
				}
				return 0
			}
			h = refGAT(b, h, ly.In, ly.Heads, ly.F, ly.Concat, ps[k], ps[k+1], ps[k+2], ps[k+3], keep)
		}
		k += len(layer.Params())
		if l < len(m.Layers)-1 {
			for i, v := range h {
				if m.Act == ActELU {
					if v <= 0 {
						h[i] = math.Expm1(v)
					}
				} else if v < 0 {
					h[i] = 0
				}
			}
			if p > 0 {
				drop(h, l+1)
			}
		}
	}
	C := m.Layers[len(m.Layers)-1].OutDim()
	loss, n := 0.0, 0
	for r, y := range labels {
		if y < 0 {
			continue
		}
		row := h[r*C : (r+1)*C]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp(v - mx)
		}
		loss += mx + math.Log(s) - row[y]
		n++
	}
	return loss / float64(n)
}

// TestModelGradients checks whole models (layers + ReLU/ELU + dropout with
// its fixed per-step masks + cross-entropy) against finite differences.
func TestModelGradients(t *testing.T) {
	for _, kind := range []string{KindSAGE, KindGCN, KindGAT} {
		for _, drop := range []float32{0, 0.3} {
			t.Run(fmt.Sprintf("%s/drop%.1f", kind, drop), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(5, uint64(len(kind))))
				blocks := chainBlocks(rng, []int{14, 9, 5, 3}, 4, kind == KindGCN)
				m, err := NewModel(kind, 5, 4, 3, 3, 2, drop, 11)
				if err != nil {
					t.Fatal(err)
				}
				randomize(rng, m.Params())
				x := randTensor(rng, 14, 5)
				labels := []int32{0, 2, -1}
				m.ZeroGrad()
				logits := m.Forward(blocks, x, true)
				d := NewTensor(logits.Rows, logits.Cols)
				loss, _ := SoftmaxCrossEntropy(logits, labels, d)
				m.Backward(d)
				var ps []vec
				var gs [][]float32
				var names []string
				for _, p := range m.Params() {
					ps = append(ps, f64(p.Value))
					gs = append(gs, p.Grad.Data)
					names = append(names, p.Name)
				}
				xs := f64(x)
				f := func() float64 { return refModelLoss(m, blocks, xs, ps, labels) }
				if ref := f(); math.Abs(ref-float64(loss)) > 1e-4*math.Max(1, ref) {
					t.Fatalf("loss %.6g, reference %.6g", loss, ref)
				}
				checkGrads(t, "model "+kind, f, ps, gs, names)
			})
		}
	}
}

func TestModelDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	b, x, y := toyProblem(rng, 60, 3, 8)
	run := func() []float32 {
		m, err := NewModel(KindGAT, 8, 8, 3, 2, 2, 0.5, 42)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			m.Step([]graph.Block{b, b}, x, y)
		}
		return append([]float32{}, m.Params()[0].Value.Data...)
	}
	a, c := run(), run()
	for i := range a {
		if a[i] != c[i] {
			t.Fatalf("same seed gave different weights at %d: %v vs %v", i, a[i], c[i])
		}
	}
}

func TestNewModelErrors(t *testing.T) {
	cases := []struct {
		kind                               string
		in, hidden, classes, layers, heads int
		drop                               float32
		want                               string
	}{
		{"mlp", 4, 4, 2, 2, 1, 0, "unknown kind"},
		{"sage", 4, 4, 2, 0, 1, 0, "layers=0"},
		{"gat", 4, 6, 2, 2, 4, 0, "heads"},
		{"gcn", 4, 4, 2, 2, 1, 1, "dropout"},
	}
	for _, c := range cases {
		_, err := NewModel(c.kind, c.in, c.hidden, c.classes, c.layers, c.heads, c.drop, 1)
		if !errors.Is(err, ErrBadModel) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewModel(%s …): err %v, want ErrBadModel mentioning %q", c.kind, err, c.want)
		}
	}
}

func TestModelValidate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	m, _ := NewModel(KindSAGE, 4, 8, 2, 2, 1, 0, 1)
	good := chainBlocks(rng, []int{10, 6, 3}, 3, false)
	x := randTensor(rng, 10, 4)
	if err := m.Validate(good, x); err != nil {
		t.Fatalf("valid input rejected: %v", err)
	}
	bad := chainBlocks(rng, []int{10, 6, 3}, 3, false)
	bad[1].NumSrc = 7
	bad2 := chainBlocks(rng, []int{10, 6, 3}, 3, false)
	bad2[0].Indices = append([]int32{}, bad2[0].Indices...)
	if len(bad2[0].Indices) > 0 {
		bad2[0].Indices[0] = 99
	}
	cases := []struct {
		blocks []graph.Block
		x      *Tensor
		want   string
	}{
		{good[:1], x, "2 layers but got 1"},
		{bad, x, "NumSrc"},
		{bad2, x, "out of range"},
		{good, randTensor(rng, 9, 4), "features are"},
	}
	for _, c := range cases {
		if err := m.Validate(c.blocks, c.x); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate: err %v, want one mentioning %q", err, c.want)
		}
	}
}

// TestArenaSteadyState checks that repeated steps stop allocating arena memory.
func TestArenaSteadyState(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	blocks := chainBlocks(rng, []int{400, 150, 40}, 8, false)
	x := randTensor(rng, 400, 16)
	y := make([]int32, 40)
	m, _ := NewModel(KindSAGE, 16, 32, 4, 2, 1, 0.5, 1)
	for i := 0; i < 3; i++ {
		m.Step(blocks, x, y)
	}
	before := m.ArenaBytes()
	allocs := testing.AllocsPerRun(5, func() { m.Step(blocks, x, y) })
	if m.ArenaBytes() != before {
		t.Fatalf("arena grew from %d to %d bytes in steady state", before, m.ArenaBytes())
	}
	// a handful of small allocations (goroutine closures, reductions) remain
	if allocs > 400 {
		t.Fatalf("%v allocations per step in steady state", allocs)
	}
	t.Logf("steady state: arena %d bytes, %v allocs/step", before, allocs)
	if st := m.LastStepTimes(); st.Forward <= 0 || st.Backward <= 0 {
		t.Fatalf("LastStepTimes not recorded: %+v", st)
	}
	// A reserved workspace is one chunk that a step fits without growing.
	floats, ints := m.ArenaSizes()
	m.ReserveArena(2*floats, 2*ints)
	if f, i := m.ArenaSizes(); f != 2*floats || i != 2*ints {
		t.Fatalf("reserved %d floats %d ints, want %d %d", f, i, 2*floats, 2*ints)
	}
	m.Step(blocks, x, y)
	if f, _ := m.ArenaSizes(); f != 2*floats {
		t.Fatalf("a step in a reserved arena grew it from %d to %d floats", 2*floats, f)
	}
	m.FreeScratch()
	if m.ArenaBytes() != 0 {
		t.Fatalf("FreeScratch left %d bytes", m.ArenaBytes())
	}
	if loss, _ := m.Step(blocks, x, y); loss <= 0 {
		t.Fatalf("step after FreeScratch: loss %v", loss)
	}
}
