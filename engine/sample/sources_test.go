package sample

import (
	"encoding/binary"
	"os"
	"path/filepath"
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
