package osutil

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// FreeDiskBytes is the space an unprivileged writer has left on the file
// system holding path (statfs: available blocks × block size).
func FreeDiskBytes(path string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", path, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// AdviseSequential tells the kernel that f will be read sequentially
// (posix_fadvise SEQUENTIAL: a larger readahead). It is a hint.
func AdviseSequential(f *os.File) error {
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_SEQUENTIAL); err != nil {
		return fmt.Errorf("fadvise(SEQUENTIAL) %s: %w", f.Name(), err)
	}
	return nil
}

// ErrLocked is returned by TryLock when another open file description
// holds the lock.
var ErrLocked = errors.New("locked by another process")

// TryLock takes an exclusive advisory lock on f (flock) without waiting;
// the error wraps ErrLocked when someone else holds it. The lock goes
// with the open file: Unlock or closing f releases it.
func TryLock(f *os.File) error {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("flock %s: %w", f.Name(), ErrLocked)
		}
		return fmt.Errorf("flock %s: %w", f.Name(), err)
	}
	return nil
}

// Unlock releases TryLock's lock on f.
func Unlock(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_UN)
}

// DeviceID is the st_dev of the file system holding path: two paths with
// the same id are on the same file system (the device profile of the I/O
// floor names the one it measured).
func DeviceID(path string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, err
	}
	return uint64(st.Dev), nil
}

// FileSystemID names the file system holding path, for the device profile
// of the I/O floor: its st_dev and the file system's id (statfs f_fsid,
// which ext4 and xfs derive from their UUID), as "dev<major>.<minor>-fs<id>"
// in hex. Two paths with the same name are on the same file system; a
// data directory moved to other storage, or a file system made anew on the
// same device, gets another name. Safe in a file name.
func FileSystemID(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", fmt.Errorf("stat %s: %w", path, err)
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil {
		return "", fmt.Errorf("statfs %s: %w", path, err)
	}
	return DevicePart(uint64(st.Dev)) + fmt.Sprintf("fs%08x%08x", uint32(fs.Fsid.Val[0]), uint32(fs.Fsid.Val[1])), nil
}

// DevicePart is the part of a FileSystemID that names the device st_dev
// (with its trailing "-"): how a record that kept only st_dev is matched.
func DevicePart(dev uint64) string {
	return fmt.Sprintf("dev%x.%x-", unix.Major(dev), unix.Minor(dev))
}

// FileSystemType names the type of the file system holding path ("ext4",
// "xfs", "tmpfs", ...; "0xMAGIC" for one not known here, "" when statfs
// fails).
func FileSystemType(path string) string {
	var fs unix.Statfs_t
	if unix.Statfs(path, &fs) != nil {
		return ""
	}
	switch fs.Type {
	case unix.EXT4_SUPER_MAGIC:
		return "ext4" // ext2 and ext3 share the magic
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlay"
	case unix.NFS_SUPER_MAGIC:
		return "nfs"
	case unix.F2FS_SUPER_MAGIC:
		return "f2fs"
	}
	return fmt.Sprintf("0x%x", fs.Type)
}
