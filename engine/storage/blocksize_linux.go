package storage

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// alignment is what direct I/O on one file requires.
type alignment struct {
	block  int64  // file offset and length alignment
	mem    int64  // buffer address alignment
	source string // where block came from, for the log line
}

// detectAlignment finds the direct-I/O alignment of the open file fd: the
// logical sector size of the block device holding it (ioctl(BLKSSZGET) on
// the device node, or the same number from sysfs where the node cannot be
// opened), else statx(STATX_DIOALIGN), else st_blksize, else 512. When the
// device and STATX_DIOALIGN both answer, the larger wins (the file system
// may ask for more than the device).
func detectAlignment(fd int) alignment {
	a := alignment{mem: 512}
	var sx unix.Statx_t
	statxOK := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_BASIC_STATS|unix.STATX_DIOALIGN, &sx) == nil
	dioOff := int64(0)
	if statxOK && sx.Mask&unix.STATX_DIOALIGN != 0 && sx.Dio_offset_align != 0 {
		dioOff = int64(sx.Dio_offset_align)
		a.mem = max(int64(sx.Dio_mem_align), 1)
	}
	if statxOK {
		major, minor := sx.Dev_major, sx.Dev_minor
		if sx.Mode&unix.S_IFMT == unix.S_IFBLK {
			major, minor = sx.Rdev_major, sx.Rdev_minor
		}
		ss, src, err := blockDeviceSectorSize(major, minor)
		if err != nil {
			ss, src, err = sysfsSectorSize(major, minor)
		}
		if err == nil && ss > 0 {
			a.block, a.source = ss, src
			if dioOff > ss {
				a.block, a.source = dioOff, fmt.Sprintf("statx STATX_DIOALIGN (%s says %d)", src, ss)
			}
			return a
		}
	}
	if dioOff > 0 {
		a.block, a.source = dioOff, "statx STATX_DIOALIGN"
		return a
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && st.Blksize > 0 && st.Blksize&(st.Blksize-1) == 0 {
		a.block, a.source = int64(st.Blksize), "st_blksize"
		return a
	}
	a.block, a.source = 512, "default"
	return a
}

// sysfsSectorSize reads the logical block size of block device major:minor
// (or, for a partition, of its disk) from sysfs.
func sysfsSectorSize(major, minor uint32) (int64, string, error) {
	dir := fmt.Sprintf("/sys/dev/block/%d:%d", major, minor)
	var err error
	for _, p := range []string{dir + "/queue/logical_block_size", dir + "/../queue/logical_block_size"} {
		var b []byte
		if b, err = os.ReadFile(p); err != nil {
			continue
		}
		var n int64
		if _, err = fmt.Sscan(strings.TrimSpace(string(b)), &n); err != nil || n <= 0 || n&(n-1) != 0 {
			err = fmt.Errorf("%s: bad block size %q", p, b)
			continue
		}
		return n, "sysfs " + p, nil
	}
	return 0, "", err
}

// blockDeviceSectorSize asks the block device major:minor for its logical
// sector size with ioctl(BLKSSZGET). The device node is found through
// /sys/dev/block/M:m/uevent; opening it needs read permission (root).
func blockDeviceSectorSize(major, minor uint32) (int64, string, error) {
	uevent := fmt.Sprintf("/sys/dev/block/%d:%d/uevent", major, minor)
	fh, err := os.Open(uevent)
	if err != nil {
		return 0, "", err
	}
	defer fh.Close()
	name := ""
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "DEVNAME="); ok {
			name = v
		}
	}
	if name == "" {
		return 0, "", fmt.Errorf("%s: no DEVNAME", uevent)
	}
	dev := "/dev/" + name
	fd, err := unix.Open(dev, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return 0, dev, fmt.Errorf("open %s: %w", dev, err)
	}
	defer unix.Close(fd)
	ss, err := unix.IoctlGetInt(fd, unix.BLKSSZGET)
	if err != nil {
		return 0, dev, fmt.Errorf("ioctl BLKSSZGET %s: %w", dev, err)
	}
	return int64(ss), dev, nil
}
