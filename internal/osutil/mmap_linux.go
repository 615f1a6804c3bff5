package osutil

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Mapping is a read-only memory map of a whole file with readahead off
// (madvise MADV_RANDOM): every first touch of a page is one synchronous
// page-sized read on the touching thread, and the pages stay in the page
// cache, charged to the memory cgroup, until the kernel reclaims them.
// This is how PyG+ (Ginex §5.1) holds topology and features, and how
// GNNDrive's samplers read the indices (GNNDrive §4.4).
type Mapping struct {
	// Path is the mapped file.
	Path string
	// Data is the file's bytes (nil for an empty file or after Close).
	Data []byte
}

// MapFile maps the whole file at path read-only with readahead off.
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
	b, err := MapFD(int(f.Fd()), st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Mapping{Path: path, Data: b}, nil
}

// Close unmaps the file; no slice of Data may be used afterwards. Closing
// twice is harmless.
func (m *Mapping) Close() error {
	if m == nil || m.Data == nil {
		return nil
	}
	err := Unmap(m.Data)
	m.Data = nil
	if err != nil {
		return fmt.Errorf("%s: %w", m.Path, err)
	}
	return nil
}

// MapFD maps size bytes of the open file fd from offset 0, read-only and
// shared, with readahead off (MADV_RANDOM). A size of 0 maps nothing and
// returns nil. The map outlives fd; release it with Unmap.
func MapFD(fd int, size int64) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	if size < 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("mmap: %d bytes do not fit the address space", size)
	}
	b, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes: %w", size, err)
	}
	if err := unix.Madvise(b, unix.MADV_RANDOM); err != nil {
		unix.Munmap(b)
		return nil, fmt.Errorf("madvise(MADV_RANDOM): %w", err)
	}
	return b, nil
}

// AnonMap maps n bytes of zeroed anonymous memory: page-aligned and outside
// the Go heap (the garbage collector never scans, moves or frees it), so
// the kernel may write into it while a read is in flight and a cache held
// there does not inflate the heap's pacing. Pages are charged to the
// memory cgroup when first touched. n <= 0 returns nil. Release with Unmap.
func AnonMap(n int) ([]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("map %d bytes of anonymous memory: %w", n, err)
	}
	return b, nil
}

// Unmap releases a map from MapFD or AnonMap (nil is a no-op).
func Unmap(b []byte) error {
	if b == nil {
		return nil
	}
	if err := unix.Munmap(b); err != nil {
		return fmt.Errorf("munmap %d bytes: %w", len(b), err)
	}
	return nil
}

// Release returns the pages of an anonymous map to the system
// (MADV_DONTNEED): the map stays valid and reads as zeros until written
// again, and its memory is no longer charged.
func Release(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if err := unix.Madvise(b, unix.MADV_DONTNEED); err != nil {
		return fmt.Errorf("release %d bytes: %w", len(b), err)
	}
	return nil
}

// PageSize is the system's memory page size.
func PageSize() int { return unix.Getpagesize() }

// Mincore fills vec (one byte per page of b; at least
// ceil(len(b)/PageSize()) bytes) with the page-cache residency of the
// mapped pages of b: bit 0 set = resident.
func Mincore(b []byte, vec []byte) error {
	if len(b) == 0 {
		return nil
	}
	ps := unix.Getpagesize()
	if len(vec) < (len(b)+ps-1)/ps {
		return fmt.Errorf("mincore: vector of %d bytes for %d bytes of mapping", len(vec), len(b))
	}
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		return fmt.Errorf("mincore: %w", errno)
	}
	return nil
}
