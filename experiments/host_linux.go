package experiments

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"outcore/engine/metrics"
	"outcore/internal/version"
)

// hostFacts describes this machine for run records. dir is a path on the
// disk the data lives on (for its model).
func hostFacts(dir, gpuName string) metrics.HostFacts {
	h := metrics.HostFacts{
		Cores:     runtime.NumCPU(),
		GoVersion: runtime.Version(),
		Version:   Version(),
		GPU:       gpuName,
	}
	h.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	h.MemBytes = memTotal()
	h.DiskModel = diskModel(dir)
	return h
}

// Version is this build's outcore version (see package version).
func Version() string { return version.String() }

func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			fs := strings.Fields(rest)
			if len(fs) > 0 {
				kb, _ := strconv.ParseInt(fs[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// diskModel names the block device holding dir: its device/model
// (SCSI, NVMe, SATA) when the kernel exposes one, else the device name and
// its driver ("vda (virtio_blk)").
func diskModel(dir string) string {
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return ""
	}
	sys, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev))))
	if err != nil {
		return ""
	}
	if fileExists(filepath.Join(sys, "partition")) {
		sys = filepath.Dir(sys)
	}
	name := filepath.Base(sys)
	if b, err := os.ReadFile(filepath.Join(sys, "device", "model")); err == nil {
		if m := strings.TrimSpace(string(b)); m != "" {
			return m
		}
	}
	// Device-mapper, md and loop devices: name the first underlying disk.
	if slaves, err := os.ReadDir(filepath.Join(sys, "slaves")); err == nil && len(slaves) > 0 {
		return name + " on " + slaves[0].Name()
	}
	if drv, err := filepath.EvalSymlinks(filepath.Join(sys, "device", "driver")); err == nil {
		return name + " (" + filepath.Base(drv) + ")"
	}
	return name
}

// dropPageCache writes back dirty pages and drops the page cache, dentries
// and inodes (echo 3 > /proc/sys/vm/drop_caches). It needs root.
func dropPageCache() error {
	unix.Sync()
	f, err := os.OpenFile("/proc/sys/vm/drop_caches", os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("drop page cache: %w", err)
	}
	if _, err := f.WriteString("3"); err != nil {
		f.Close()
		return fmt.Errorf("drop page cache: %w", err)
	}
	return f.Close()
}
