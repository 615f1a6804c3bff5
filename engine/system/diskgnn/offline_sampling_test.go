package diskgnn

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"outcore/engine/graph"
	"outcore/engine/sample"
)

// testTopology is a random power-law-ish graph of n nodes.
func testTopology(n int, seed uint64) sample.Topology {
	r := rand.New(rand.NewPCG(seed, 1))
	indptr := make([]int64, n+1)
	var idx []int64
	for v := 0; v < n; v++ {
		d := 1 + r.IntN(12)
		for k := 0; k < d; k++ {
			u := r.Float64()
			idx = append(idx, int64(u*u*float64(n)))
		}
		slices.Sort(idx[indptr[v]:])
		indptr[v+1] = int64(len(idx))
	}
	return sample.Topology{Indptr: indptr, Indices: sample.MemIndices(idx)}
}

func sameBatch(a, b *graph.MiniBatch) bool {
	if a.Epoch != b.Epoch || a.Index != b.Index || !slices.Equal(a.Seeds, b.Seeds) || !slices.Equal(a.InputNodes, b.InputNodes) || len(a.Blocks) != len(b.Blocks) {
		return false
	}
	for k := range a.Blocks {
		x, y := &a.Blocks[k], &b.Blocks[k]
		if x.NumSrc != y.NumSrc || x.NumDst != y.NumDst || !slices.Equal(x.Indptr, y.Indptr) || !slices.Equal(x.Indices, y.Indices) ||
			!slices.Equal(x.SrcDeg, y.SrcDeg) || !slices.Equal(x.DstDeg, y.DstDeg) {
			return false
		}
	}
	return true
}

// TestOfflineSamplingStoresTheReferenceBatches: every batch of every
// epoch, sampled ahead by several workers and read back from the samples
// file, is the batch the sampler draws for that (epoch, batch) directly,
// degrees included; the access counts are those of the inputs.
func TestOfflineSamplingStoresTheReferenceBatches(t *testing.T) {
	topo := testTopology(500, 3)
	proto, err := sample.New(topo, []int{4, 3}, 9)
	if err != nil {
		t.Fatal(err)
	}
	train := make([]int64, 120)
	for i := range train {
		train[i] = int64(i * 4)
	}
	const epochs, batch = 3, 25
	perEpoch := (len(train) + batch - 1) / batch
	batches := func(e int) [][]int64 { return sample.EpochBatches(train, batch, 9, e) }
	path := filepath.Join(t.TempDir(), "samples.bin")
	w, err := createSampleWriter(path, epochs*perEpoch, 4096)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int32, 500)
	var progressed int
	st, err := offlineSample(context.Background(), proto, epochs, perEpoch, batches, 3, w, counts, func(d, n int) { progressed = max(progressed, d) })
	if err != nil {
		t.Fatal(err)
	}
	refs, written, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st.Samples != epochs*perEpoch || progressed != st.Samples || written <= 0 {
		t.Fatalf("stats %+v, progress %d, written %d", st, progressed, written)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	direct := proto.Clone()
	want := make([]int32, 500)
	var got graph.MiniBatch
	var accesses int64
	for e := 0; e < epochs; e++ {
		for i, seeds := range batches(e) {
			ref := refs[e*perEpoch+i]
			if ref.Off%regionAlign != 0 {
				t.Fatalf("sample %d at unaligned offset %d", e*perEpoch+i, ref.Off)
			}
			mb, err := direct.Sample(e, i, seeds)
			if err != nil {
				t.Fatal(err)
			}
			if err := decodeSample(file[ref.Off:ref.Off+ref.Len], topo.Indptr, &got); err != nil {
				t.Fatal(err)
			}
			if !sameBatch(mb, &got) {
				t.Fatalf("epoch %d batch %d differs from the directly sampled batch", e, i)
			}
			var view graph.MiniBatch
			if err := decodeSampleView(file[ref.Off:ref.Off+ref.Len], topo.Indptr, &view); err != nil || !sameBatch(mb, &view) {
				t.Fatalf("epoch %d batch %d: view decoding differs (%v)", e, i, err)
			}
			ids, err := decodeInputs(file[ref.Off:ref.Off+ref.InputsLen()], 500, nil)
			if err != nil || !slices.Equal(ids, mb.InputNodes) {
				t.Fatalf("inputs prefix of sample %d: %v", e*perEpoch+i, err)
			}
			for _, v := range mb.InputNodes {
				want[v]++
			}
			accesses += int64(len(mb.InputNodes))
		}
	}
	if !slices.Equal(counts, want) || st.Accesses != accesses {
		t.Fatal("access counts differ from the inputs of the samples")
	}
}

func TestDecodeSampleRejectsCorruption(t *testing.T) {
	topo := testTopology(100, 5)
	s, _ := sample.New(topo, []int{3, 3}, 1)
	mb, err := s.Sample(0, 0, []int64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	b := encodeSample(nil, mb)
	var out graph.MiniBatch
	if err := decodeSample(b, topo.Indptr, &out); err != nil || !sameBatch(mb, &out) {
		t.Fatalf("round trip: %v", err)
	}
	for _, cut := range []int{0, 10, sampleHeaderSize, len(b) - 1} {
		if err := decodeSample(b[:cut], topo.Indptr, &out); err == nil {
			t.Fatalf("truncated to %d bytes: accepted", cut)
		}
	}
	bad := slices.Clone(b)
	bad[len(bad)-1] = 0x7f // last source index out of range
	if err := decodeSample(bad, topo.Indptr, &out); err == nil {
		t.Fatal("source index out of range accepted")
	}
	bad = slices.Clone(b)
	bad[sampleHeaderSize] = 0xff // first input node negative/huge
	bad[sampleHeaderSize+7] = 0x7f
	if err := decodeSample(bad, topo.Indptr, &out); err == nil {
		t.Fatal("input node outside the graph accepted")
	}
}

func FuzzDecodeSample(f *testing.F) {
	topo := testTopology(50, 2)
	s, _ := sample.New(topo, []int{2, 2}, 1)
	mb, _ := s.Sample(0, 0, []int64{1, 2})
	f.Add(encodeSample(nil, mb))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var out graph.MiniBatch
		if err := decodeSample(b, topo.Indptr, &out); err != nil {
			return
		}
		// a region that decodes is a valid batch
		for k, bl := range out.Blocks {
			for _, j := range bl.Indices {
				if int(j) >= bl.NumSrc {
					t.Fatalf("block %d source %d of %d", k, j, bl.NumSrc)
				}
			}
			if int(bl.Indptr[bl.NumDst]) != len(bl.Indices) {
				t.Fatalf("block %d indptr", k)
			}
		}
	})
}
