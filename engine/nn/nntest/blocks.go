package nntest

import (
	"math/rand/v2"

	"outcore/engine/graph"
)

// SampledBlocks builds the blocks of one mini-batch the way a uniform
// neighbour sampler would on a random graph of n nodes: `batch` seeds, then
// for each layer (last first) fanout distinct random neighbours per
// destination, deduplicated into local ids with destinations first.
// ragged gives one row in seven 0–2 neighbours (ragged rows, empty rows).
func SampledBlocks(rng *rand.Rand, n, batch int, fanouts []int, ragged bool) []graph.Block {
	L := len(fanouts)
	blocks := make([]graph.Block, L)
	dst := make([]int64, 0, batch)
	seen := map[int64]bool{}
	for len(dst) < batch {
		v := rng.Int64N(int64(n))
		if !seen[v] {
			seen[v] = true
			dst = append(dst, v)
		}
	}
	for l := L - 1; l >= 0; l-- {
		local := make(map[int64]int32, len(dst)*fanouts[l])
		src := append([]int64{}, dst...)
		for i, v := range dst {
			local[v] = int32(i)
		}
		b := graph.Block{NumDst: len(dst), Indptr: make([]int32, len(dst)+1)}
		for i := range dst {
			row := map[int64]bool{}
			k := fanouts[l]
			if ragged && i%7 == 3 { // some rows with fewer neighbours, some with none
				k = i % 3
			}
			for len(row) < k {
				u := rng.Int64N(int64(n))
				if row[u] || u == dst[i] {
					continue
				}
				row[u] = true
				id, ok := local[u]
				if !ok {
					id = int32(len(src))
					local[u] = id
					src = append(src, u)
				}
				b.Indices = append(b.Indices, id)
			}
			b.Indptr[i+1] = int32(len(b.Indices))
		}
		b.NumSrc = len(src)
		blocks[l] = b
		dst = src
	}
	return blocks
}
