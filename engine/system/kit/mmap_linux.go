package kit

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Mapping is a read-only memory map of a whole file with readahead off
// (madvise(MADV_RANDOM)): every first touch of a page is one synchronous
// page-sized read on the touching thread, and the pages stay in the page
// cache, charged to the memory cgroup, until the kernel reclaims them. This
// is how PyG+ (Ginex §5.1) holds topology and features, and how GNNDrive's
// samplers read the indices (GNNDrive §4.4).
type Mapping struct {
	path string
	// Data is the mapped file (nil for an empty file).
	Data []byte
}

// MapFile maps path read-only with readahead off.
func MapFile(path string) (*Mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	m := &Mapping{path: path}
	if st.Size() == 0 {
		return m, nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	if err := unix.Madvise(b, unix.MADV_RANDOM); err != nil {
		unix.Munmap(b)
		return nil, fmt.Errorf("madvise(MADV_RANDOM) %s: %w", path, err)
	}
	m.Data = b
	return m, nil
}

// Close unmaps the file.
func (m *Mapping) Close() error {
	if m == nil || m.Data == nil {
		return nil
	}
	err := unix.Munmap(m.Data)
	m.Data = nil
	if err != nil {
		return fmt.Errorf("munmap %s: %w", m.path, err)
	}
	return nil
}

// DropFileCache asks the kernel to drop path's clean pages from the page
// cache (posix_fadvise DONTNEED), so that an offline pass over a file does
// not leave its pages charged to the run. It is only a hint.
func DropFileCache(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	f.Close()
}

// Mincore fills vec (one byte per page of b) with the kernel's page-cache
// residency of b's pages: bit 0 set = resident.
func Mincore(b []byte, vec []byte) error {
	if len(b) == 0 {
		return nil
	}
	if len(vec) < (len(b)+unix.Getpagesize()-1)/unix.Getpagesize() {
		return fmt.Errorf("Mincore: vector of %d bytes for %d bytes of mapping", len(vec), len(b))
	}
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		return fmt.Errorf("Mincore: %w", errno)
	}
	return nil
}
