package metrics

import (
	"bytes"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// CollectHost fills the host facts this package can read (hostname, kernel,
// cores, memory, Go version). The caller sets GPU, GEMM, Version and
// DiskModel.
func CollectHost() HostFacts {
	h := HostFacts{Cores: runtime.NumCPU(), GoVersion: runtime.Version(), GPU: "none"}
	h.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = string(bytes.TrimRight(u.Release[:], "\x00"))
	}
	if v, err := readKeyed("/proc/meminfo", "MemTotal:", 1024); err == nil {
		h.MemBytes = v
	}
	return h
}

// DiskModel returns the model name of the block device that holds path
// (/sys/block/<dev>/device/model), or "" when it cannot be found.
func DiskModel(path string) string {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return ""
	}
	major, minor := unix.Major(st.Dev), unix.Minor(st.Dev)
	link, err := os.Readlink("/sys/dev/block/" + itoa(major) + ":" + itoa(minor))
	if err != nil {
		return ""
	}
	// link is like ../../devices/.../block/vda/vda1; the disk is the
	// component after "block/".
	parts := strings.Split(link, "/")
	for i, p := range parts {
		if p == "block" && i+1 < len(parts) {
			for _, f := range []string{"/sys/block/" + parts[i+1] + "/device/model", "/sys/block/" + parts[i+1] + "/device/vendor"} {
				if b, err := os.ReadFile(f); err == nil {
					if s := strings.TrimSpace(string(b)); s != "" {
						return s
					}
				}
			}
			return parts[i+1]
		}
	}
	return ""
}

func itoa(v uint32) string {
	if v == 0 {
		return "0"
	}
	var b [10]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[i:])
}

// MemoryCgroupLimit returns the memory limit of the process's memory cgroup
// (v2 memory.max, v1 memory.limit_in_bytes) and whether one is set: a
// cgroup without a limit ("max", or v1's huge sentinel) reports false.
func MemoryCgroupLimit() (int64, bool) {
	usage, err := MemoryCgroupFile()
	if err != nil {
		return 0, false
	}
	dir := usage[:strings.LastIndexByte(usage, '/')]
	for _, f := range []string{"memory.max", "memory.limit_in_bytes"} {
		b, err := os.ReadFile(dir + "/" + f)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, false
		}
		v, err := ReadInt64File(dir + "/" + f)
		if err != nil || v <= 0 || v >= 1<<62 {
			return 0, false
		}
		return v, true
	}
	return 0, false
}
