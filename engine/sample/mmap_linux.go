package sample

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MmapIndices is indices.bin memory-mapped read-only with readahead off
// (MADV_RANDOM), as PyG+ keeps its topology: page faults happen on the
// sampling goroutine and pages live in the page cache.
type MmapIndices struct {
	data []byte
	all  []int64
}

// OpenMmapIndices maps path, which must hold exactly edges int64 entries.
func OpenMmapIndices(path string, edges int64) (*MmapIndices, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open indices %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Size() != edges*8 {
		return nil, fmt.Errorf("indices %s: %d bytes, want %d (%d int64 entries)", path, st.Size(), edges*8, edges)
	}
	m := &MmapIndices{}
	if edges == 0 {
		return m, nil
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	if err := unix.Madvise(data, unix.MADV_RANDOM); err != nil {
		unix.Munmap(data)
		return nil, fmt.Errorf("madvise %s: %w", path, err)
	}
	m.data = data
	m.all = unsafe.Slice((*int64)(unsafe.Pointer(&data[0])), edges)
	return m, nil
}

// Gather implements IndexSource.
func (m *MmapIndices) Gather(pos []int64, out []int64) error {
	return MemIndices(m.all).Gather(pos, out)
}

// All implements InMemory.
func (m *MmapIndices) All() []int64 { return m.all }

// Close unmaps the file; no sampler may use it afterwards.
func (m *MmapIndices) Close() error {
	if m.data == nil {
		return nil
	}
	err := unix.Munmap(m.data)
	m.data, m.all = nil, nil
	if err != nil {
		return fmt.Errorf("munmap indices: %w", err)
	}
	return nil
}
