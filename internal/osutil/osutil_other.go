//go:build !linux

package osutil

import (
	"errors"
	"os"
	"runtime"
	"time"
)

// Mapping is a read-only memory map of a file (Linux only).
type Mapping struct {
	Path string
	Data []byte
}

// MapFile is unsupported off Linux.
func MapFile(path string) (*Mapping, error) { return nil, ErrUnsupported }

// Close does nothing off Linux.
func (m *Mapping) Close() error { return nil }

// MapFD is unsupported off Linux.
func MapFD(fd int, size int64) ([]byte, error) { return nil, ErrUnsupported }

// AnonMap falls back to the Go heap off Linux.
func AnonMap(n int) ([]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	return make([]byte, n), nil
}

// Unmap does nothing off Linux.
func Unmap(b []byte) error { return nil }

// Release zeroes b off Linux.
func Release(b []byte) error { clear(b); return nil }

// PageSize is the system's memory page size.
func PageSize() int { return os.Getpagesize() }

// Mincore is unsupported off Linux.
func Mincore(b []byte, vec []byte) error { return ErrUnsupported }

// DropCache does nothing off Linux (no posix_fadvise).
func DropCache(f *os.File) error { return nil }

// DropRange does nothing off Linux.
func DropRange(f *os.File, off, n int64) error { return nil }

// DropFileCache does nothing off Linux.
func DropFileCache(path string) error { return nil }

// DropMapped does nothing off Linux.
func DropMapped(b []byte, path string) error { return nil }

// EvictDir is unsupported off Linux.
func EvictDir(dir string) (int, error) { return 0, ErrUnsupported }

// DropAllCaches is unsupported off Linux.
func DropAllCaches() error { return ErrUnsupported }

// ReadBytes is unsupported off Linux.
func ReadBytes() (int64, error) { return 0, ErrUnsupported }

// ProcessReadBytes is unsupported off Linux.
func ProcessReadBytes(pid int) (int64, error) { return 0, ErrUnsupported }

// ProcessRSSBytes is unsupported off Linux.
func ProcessRSSBytes(pid int) (int64, error) { return 0, ErrUnsupported }

// ProcessCPUSeconds is unsupported off Linux.
func ProcessCPUSeconds(pid int) (float64, error) { return 0, ErrUnsupported }

// StatusBytes is unsupported off Linux.
func StatusBytes(field string) (int64, error) { return 0, ErrUnsupported }

// RSSBytes is unsupported off Linux.
func RSSBytes() (int64, error) { return 0, ErrUnsupported }

// PeakRSSBytes is unsupported off Linux.
func PeakRSSBytes() (int64, error) { return 0, ErrUnsupported }

// AnonRSSBytes is unsupported off Linux.
func AnonRSSBytes() (int64, error) { return 0, ErrUnsupported }

// CPUSeconds is unsupported off Linux.
func CPUSeconds() (float64, error) { return 0, ErrUnsupported }

// SystemCPUTimes is unsupported off Linux.
func SystemCPUTimes() (total, iowait int64, err error) { return 0, 0, ErrUnsupported }

// MemTotalBytes is unsupported off Linux.
func MemTotalBytes() (int64, error) { return 0, ErrUnsupported }

// ReadInt64File reads a file that holds one decimal integer.
func ReadInt64File(p string) (int64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	return ParseInt64(b)
}

// CollectHost returns what Go knows without /proc.
func CollectHost(dir string) Host {
	h := Host{Cores: runtime.NumCPU(), GoVersion: runtime.Version()}
	h.Hostname, _ = os.Hostname()
	return h
}

// DiskModel is unknown off Linux.
func DiskModel(path string) string { return "" }

// StartWriteback does nothing off Linux.
func StartWriteback(f *os.File, off, n int64) {}

// WaitWriteback does nothing off Linux (the final fsync makes data durable).
func WaitWriteback(f *os.File, off, n int64) error { return nil }

// ThreadReadBytes is unavailable off Linux: 0.
func ThreadReadBytes() int64 { return 0 }

// ThreadIO is unavailable off Linux: 0, 0.
func ThreadIO() (readBytes, majorFaults int64) { return 0, 0 }

// ThreadCPU is unavailable off Linux: 0.
func ThreadCPU() time.Duration { return 0 }

// FreeDiskBytes is unsupported off Linux.
func FreeDiskBytes(path string) (int64, error) { return 0, ErrUnsupported }

// AdviseSequential does nothing off Linux.
func AdviseSequential(f *os.File) error { return nil }

// ErrLocked is returned by TryLock when someone else holds the lock.
var ErrLocked = errors.New("locked by another process")

// TryLock is unsupported off Linux.
func TryLock(f *os.File) error { return ErrUnsupported }

// Unlock does nothing off Linux.
func Unlock(f *os.File) error { return nil }

// DeviceID is unsupported here.
func DeviceID(path string) (uint64, error) { return 0, ErrUnsupported }

// FileSystemID is unsupported here.
func FileSystemID(path string) (string, error) { return "", ErrUnsupported }

// FileSystemType is unknown here.
func FileSystemType(path string) string { return "" }

// DevicePart is unknown here.
func DevicePart(dev uint64) string { return "" }

// RunQueueWait is unsupported off Linux.
func RunQueueWait() (time.Duration, error) { return 0, ErrUnsupported }

// ProactiveReclaim is unknown off Linux.
func ProactiveReclaim() string { return "" }

// BlockStatFile is unsupported off Linux.
func BlockStatFile(path string) (string, error) { return "", ErrUnsupported }

// ReadBlockCounters is unsupported off Linux.
func ReadBlockCounters(file string) (BlockCounters, error) { return BlockCounters{}, ErrUnsupported }
