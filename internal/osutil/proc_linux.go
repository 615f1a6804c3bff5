package osutil

import (
	"fmt"
	"os"
)

// readKeyed reads file p and returns ParseKeyed's value of key.
func readKeyed(p, key string, mul int64) (int64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", p, err)
	}
	v, err := ParseKeyed(b, key, mul)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", p, err)
	}
	return v, nil
}

// ReadBytes returns read_bytes of /proc/self/io: the bytes this process
// caused to be fetched from the block device (page-cache misses of mmap and
// buffered reads count, as do O_DIRECT reads; page-cache hits do not).
func ReadBytes() (int64, error) { return ProcessReadBytes(0) }

// procDir is /proc/self for pid 0, else /proc/PID.
func procDir(pid int) string {
	if pid == 0 {
		return "/proc/self"
	}
	return fmt.Sprintf("/proc/%d", pid)
}

// ProcessReadBytes is ReadBytes of process pid (0: this process).
func ProcessReadBytes(pid int) (int64, error) {
	return readKeyed(procDir(pid)+"/io", "read_bytes:", 1)
}

// ProcessRSSBytes is RSSBytes of process pid (0: this process).
func ProcessRSSBytes(pid int) (int64, error) {
	return readKeyed(procDir(pid)+"/status", "VmRSS:", 1024)
}

// StatusBytes returns a kB field of /proc/self/status in bytes, e.g.
// StatusBytes("VmRSS").
func StatusBytes(field string) (int64, error) {
	return readKeyed("/proc/self/status", field+":", 1024)
}

// RSSBytes is the resident set size (/proc/self/status VmRSS).
func RSSBytes() (int64, error) { return StatusBytes("VmRSS") }

// PeakRSSBytes is the peak resident set size (VmHWM).
func PeakRSSBytes() (int64, error) { return StatusBytes("VmHWM") }

// AnonRSSBytes is the anonymous resident memory (RssAnon): heap, stacks and
// anonymous maps, without the file pages of memory maps (those belong to
// the page cache).
func AnonRSSBytes() (int64, error) { return StatusBytes("RssAnon") }

// CPUSeconds returns the CPU time (user + system) this process has used.
func CPUSeconds() (float64, error) { return ProcessCPUSeconds(0) }

// ProcessCPUSeconds is CPUSeconds of process pid (0: this process).
func ProcessCPUSeconds(pid int) (float64, error) {
	p := procDir(pid) + "/stat"
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", p, err)
	}
	v, err := ParseProcStatCPU(b)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", p, err)
	}
	return v, nil
}

// SystemCPUTimes returns the machine-wide total and iowait jiffies
// (/proc/stat); iowait % over an interval is 100·Δiowait/Δtotal.
func SystemCPUTimes() (total, iowait int64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("read /proc/stat: %w", err)
	}
	total, iowait, err = ParseSystemCPU(b)
	if err != nil {
		return 0, 0, fmt.Errorf("parse /proc/stat: %w", err)
	}
	return total, iowait, nil
}

// MemTotalBytes is the machine's memory (/proc/meminfo MemTotal).
func MemTotalBytes() (int64, error) { return readKeyed("/proc/meminfo", "MemTotal:", 1024) }

// ReadInt64File reads a file that holds one decimal integer.
func ReadInt64File(p string) (int64, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", p, err)
	}
	v, err := ParseInt64(b)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", p, err)
	}
	return v, nil
}
