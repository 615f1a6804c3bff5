package osutil

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// CollectHost describes this machine; dir is a path on the disk the data
// lives on ("" skips the disk model). Facts that cannot be read stay empty.
func CollectHost(dir string) Host {
	h := Host{Cores: runtime.NumCPU(), GoVersion: runtime.Version()}
	h.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	h.MemBytes, _ = MemTotalBytes()
	h.Reclaim = ProactiveReclaim()
	if dir != "" {
		h.DiskModel = DiskModel(dir)
		h.Storage, _ = FileSystemID(dir)
	}
	return h
}

// DiskModel names the block device holding path: its device/model (SCSI,
// NVMe, SATA) when the kernel exposes one, else the device name with the
// disk under it (device-mapper, md, loop) or its driver ("vda
// (virtio_blk)"). It returns "" when the device cannot be found (e.g. an
// overlay or tmpfs).
func DiskModel(path string) string {
	dir, err := sysBlockDir(path)
	if err != nil {
		return ""
	}
	sys, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	return diskModelAt(sys)
}

// sysBlockDir is the sysfs directory of the block device holding path
// (/sys/dev/block/MAJ:MIN, a link; the partition's when path is on one).
func sysBlockDir(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", err
	}
	return fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev))), nil
}

// readTrim is a sysfs file's text without its surrounding space; "" when
// it cannot be read.
func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// diskModelAt names the block device whose sysfs directory is sys (a
// parameter so that tests can use a fixture tree).
func diskModelAt(sys string) string {
	if _, err := os.Stat(filepath.Join(sys, "partition")); err == nil {
		sys = filepath.Dir(sys)
	}
	name := filepath.Base(sys)
	if m := readTrim(filepath.Join(sys, "device", "model")); m != "" {
		return m
	}
	if slaves, err := os.ReadDir(filepath.Join(sys, "slaves")); err == nil && len(slaves) > 0 {
		return name + " on " + slaves[0].Name()
	}
	if drv, err := filepath.EvalSymlinks(filepath.Join(sys, "device", "driver")); err == nil {
		return name + " (" + filepath.Base(drv) + ")"
	}
	return name
}
