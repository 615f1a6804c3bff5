package sample

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"outcore/engine/storage"
)

// writeIndices writes idx as little-endian int64 to a temp file.
func writeIndices(t *testing.T, idx []int64) string {
	t.Helper()
	b := make([]byte, 8*len(idx))
	for i, v := range idx {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	p := filepath.Join(t.TempDir(), "indices.bin")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFileSourcesMatchMemory(t *testing.T) {
	topo := randomGraph(3000, 25, 11)
	mem := topo.Indices.(MemIndices)
	p := writeIndices(t, mem)

	mm, err := OpenMmapIndices(p, int64(len(mem)))
	if err != nil {
		t.Fatal(err)
	}
	defer mm.Close()
	if _, err := OpenMmapIndices(p, int64(len(mem))+1); err == nil {
		t.Fatal("mmap with wrong edge count accepted")
	}

	var sources = map[string]IndexSource{"mmap": mm}
	for _, b := range []storage.Backend{storage.BackendPread, storage.BackendUring, storage.BackendMmap} {
		f, err := storage.OpenFile(p, storage.Options{Backend: b, RowBytes: 8, AllowBuffered: true, Logger: func(string) {}})
		if err != nil {
			t.Logf("backend %s unavailable: %v", b, err)
			continue
		}
		defer f.Close()
		si := NewStorageIndices(f)
		defer si.Close()
		sources["storage-"+string(b)] = si
	}
	ref, _ := New(topo, []int{7, 5}, 3)
	seeds := [][]int64{{0, 1, 2}, {2999, 1500, 7, 42}, {100}}
	for name, src := range sources {
		t.Run(name, func(t *testing.T) {
			s, err := New(Topology{Indptr: topo.Indptr, Indices: src}, []int{7, 5}, 3)
			if err != nil {
				t.Fatal(err)
			}
			// Several workers share the source, as parallel samplers do.
			var wg sync.WaitGroup
			for w := 0; w < 3; w++ {
				wg.Add(1)
				go func(s *Sampler) {
					defer wg.Done()
					for i, sd := range seeds {
						want, _ := ref.Clone().Sample(1, i, sd)
						got, err := s.Sample(1, i, sd)
						if err != nil {
							t.Error(err)
							return
						}
						if !sameBatch(want, got) {
							t.Errorf("batch %d differs from the in-memory source", i)
						}
					}
				}(s.Clone())
			}
			wg.Wait()
			// Release closes the idle readers; later gathers open new
			// ones and still read the same lists.
			if si, ok := src.(*StorageIndices); ok {
				if err := si.Release(); err != nil {
					t.Fatal(err)
				}
				if len(si.all) != 0 || len(si.free) != 0 {
					t.Fatalf("after Release: %d readers, %d idle", len(si.all), len(si.free))
				}
				want, _ := ref.Clone().Sample(1, 0, seeds[1])
				got, err := s.Clone().Sample(1, 0, seeds[1])
				if err != nil || !sameBatch(want, got) {
					t.Fatalf("sample after Release: %v", err)
				}
			}
		})
	}
}

// TestStorageIndicesChunkedGather: a Gather larger than GatherChunkRows, in
// random order, returns what the in-memory indices hold, reads the blocks
// one sorted call would (but for at most one block per chunk boundary),
// and plans no call above GatherChunkRows (the Reader's bookkeeping stays
// within GatherBytes).
func TestStorageIndicesChunkedGather(t *testing.T) {
	const entries = 1 << 20 // 8 MiB of indices, 2048 blocks of 4 KiB
	mem := make(MemIndices, entries)
	for i := range mem {
		mem[i] = int64(i*7 + 3)
	}
	p := writeIndices(t, mem)
	n := 5*GatherChunkRows + 123
	rng := rand.New(rand.NewPCG(5, 6))
	// Entries of 300 of the 2048 blocks, in random order: unsorted chunks
	// would read most of those blocks once per chunk.
	hot := make([]int64, 300)
	for i := range hot {
		hot[i] = rng.Int64N(entries / 512)
	}
	pos := make([]int64, n)
	for i := range pos {
		pos[i] = hot[rng.IntN(len(hot))]*512 + rng.Int64N(512)
	}
	// The blocks one sorted call reads: the distinct 4 KiB blocks.
	blocks := map[int64]bool{}
	for _, q := range pos {
		blocks[q*8/4096] = true
	}
	for _, b := range []storage.Backend{storage.BackendPread, storage.BackendUring} {
		t.Run(string(b), func(t *testing.T) {
			f, err := storage.OpenFile(p, storage.Options{Backend: b, RowBytes: 8, BlockSize: 4096, MaxMergeBytes: 4096, AllowBuffered: true, Logger: func(string) {}})
			if err != nil {
				t.Skipf("backend %s unavailable: %v", b, err)
			}
			defer f.Close()
			si := NewStorageIndices(f)
			defer si.Close()
			out := make([]int64, n)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			if err := si.Gather(pos, out); err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			for i, q := range pos {
				if out[i] != mem[q] {
					t.Fatalf("entry %d (position %d): got %d, want %d", i, q, out[i], mem[q])
				}
			}
			chunks := int64((n + GatherChunkRows - 1) / GatherChunkRows)
			st := f.Stats()
			want := int64(len(blocks))
			if got := st.DeviceBytes / 4096; got < want || got > want+chunks-1 {
				t.Errorf("read %d blocks, want %d (+ at most %d at chunk boundaries)", got, want, chunks-1)
			}
			heap := GatherBytes(n)
			held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			if held > heap {
				t.Errorf("after a Gather of %d entries the pooled reader holds %d B of heap, GatherBytes says %d", n, held, heap)
			}
			t.Logf("%d entries in %d chunks: %d blocks read (%d distinct), %d B held (GatherBytes %d)", n, chunks, st.DeviceBytes/4096, want, held, heap)
		})
	}
}
