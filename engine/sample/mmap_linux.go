package sample

import (
	"fmt"
	"os"

	"outcore/engine/metrics"
	"outcore/internal/osutil"
)

// MmapIndices is indices.bin memory-mapped read-only with readahead off
// (MADV_RANDOM), as PyG+ keeps its topology: page faults happen on the
// sampling goroutine and pages live in the page cache.
type MmapIndices struct {
	path    string
	data    []byte
	all     []int64
	account *metrics.ReadAccount
	kind    string
}

// CountInto makes samplers reading m add their page-fault reads to a
// under kind (Metered).
func (m *MmapIndices) CountInto(a *metrics.ReadAccount, kind string) {
	m.account, m.kind = a, kind
}

// ReadAccount implements Metered.
func (m *MmapIndices) ReadAccount() (*metrics.ReadAccount, string) { return m.account, m.kind }

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
	m := &MmapIndices{path: path}
	if edges == 0 {
		return m, nil
	}
	data, err := osutil.MapFD(int(f.Fd()), st.Size())
	if err != nil {
		return nil, fmt.Errorf("indices %s: %w", path, err)
	}
	m.data = data
	m.all = osutil.View[int64](data)
	return m, nil
}

// Gather implements IndexSource.
func (m *MmapIndices) Gather(pos []int64, out []int64) error {
	return MemIndices(m.all).Gather(pos, out)
}

// All implements InMemory.
func (m *MmapIndices) All() []int64 { return m.all }

// DropCache drops the file's pages from this process's mapping and from
// the page cache (osutil.DropMapped), so that what one phase read (the
// profiling's sampling) does not warm the next one's page cache. The
// mapping stays usable.
func (m *MmapIndices) DropCache() error {
	if m.data == nil {
		return nil
	}
	return osutil.DropMapped(m.data, m.path)
}

// Close unmaps the file; no sampler may use it afterwards.
func (m *MmapIndices) Close() error {
	if m.data == nil {
		return nil
	}
	err := osutil.Unmap(m.data)
	m.data, m.all = nil, nil
	if err != nil {
		return fmt.Errorf("munmap indices: %w", err)
	}
	return nil
}
