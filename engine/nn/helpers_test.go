package nn

import (
	"math/rand/v2"
	"testing"

	"outcore/engine/graph"
)

// randomBlock returns a block with nd destinations among ns sources and
// up to maxDeg distinct in-neighbours per destination (some with none).
func randomBlock(rng *rand.Rand, nd, ns, maxDeg int, withDeg bool) graph.Block {
	b := graph.Block{NumSrc: ns, NumDst: nd, Indptr: make([]int32, nd+1)}
	for i := 0; i < nd; i++ {
		deg := rng.IntN(maxDeg + 1)
		seen := map[int32]bool{int32(i): true}
		for k := 0; k < deg; k++ {
			j := int32(rng.IntN(ns))
			if seen[j] {
				continue
			}
			seen[j] = true
			b.Indices = append(b.Indices, j)
		}
		b.Indptr[i+1] = int32(len(b.Indices))
	}
	if withDeg {
		b.SrcDeg = make([]int32, ns)
		for j := range b.SrcDeg {
			b.SrcDeg[j] = int32(rng.IntN(20))
		}
		b.DstDeg = make([]int32, nd)
		for i := range b.DstDeg {
			b.DstDeg[i] = b.SrcDeg[i]
		}
	}
	return b
}

func randTensor(rng *rand.Rand, r, c int) *Tensor {
	t := NewTensor(r, c)
	for i := range t.Data {
		t.Data[i] = float32(rng.NormFloat64())
	}
	return t
}

// toyProblem: a graph of n nodes in k communities (edges mostly inside a
// community), features = noisy one-hot of the community, one full block.
func toyProblem(rng *rand.Rand, n, k, dim int) (graph.Block, *Tensor, []int32) {
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(i % k)
	}
	b := graph.Block{NumSrc: n, NumDst: n, Indptr: make([]int32, n+1)}
	for i := 0; i < n; i++ {
		for e := 0; e < 5; e++ {
			j := rng.IntN(n)
			if rng.Float64() < 0.9 {
				j = (j/k)*k + int(labels[i])
				if j >= n {
					j -= k
				}
			}
			if j != i {
				b.Indices = append(b.Indices, int32(j))
			}
		}
		b.Indptr[i+1] = int32(len(b.Indices))
	}
	x := randTensor(rng, n, dim)
	for i := 0; i < n; i++ {
		x.Data[i*dim+int(labels[i])%dim] += 1
	}
	return b, x, labels
}

func TestModelsOverfitToyGraph(t *testing.T) {
	for _, kind := range []string{KindSAGE, KindGCN, KindGAT} {
		t.Run(kind, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			b, x, y := toyProblem(rng, 120, 4, 16)
			m, err := NewModel(kind, 16, 32, 4, 2, 4, 0, 7)
			if err != nil {
				t.Fatal(err)
			}
			blocks := []graph.Block{b, b}
			var loss, acc float32
			for it := 0; it < 300; it++ {
				loss, acc = m.Step(blocks, x, y)
			}
			if loss > 0.05 || acc < 1 {
				t.Fatalf("%s did not overfit: loss %.4f acc %.3f", kind, loss, acc)
			}
			if ev := m.Evaluate(blocks, x, y); ev < 0.99 {
				t.Fatalf("%s eval acc %.3f", kind, ev)
			}
		})
	}
}
